"""A held-out *judgment-style* negative control (issue 40, item 4) from court text the checker has never seen.

v1's 501 JuDGE judgments are the only judgments the earlier controls have, and they were read while the
checker was developed. DISC-LawLLM's subjective evaluation set (``disc/qa_short_answer.jsonl``, 300 rows;
FudanDISC/DISC-LawLLM, Apache-2.0) answers its case-analysis questions with the court's own reasoning and
decision (``…依照《中华人民共和国刑法》第一百三十三条之一第一款第（二）项，第六十七条…的规定，判决如下：…``): real,
correct citations in a court's prose, never used to develop or tune the checker.

The rows are built exactly as v1's judgment rows (:func:`lawluo.law.controls.judgment_row`: the court's
citing formula read by a parser independent of the checker, the rule of what counts as a real citation,
appendix entries whose quote is not the article's text removed), from the outputs that read as a court's
decision (本院认为 / 判决如下). A decision's date is not in the text, so ``as_of`` is None (today's statute
book); the latest date of the facts is kept in ``source.facts_date``. It is *not* the decision's date: the
first build used it as ``as_of``, and a court that decided in 2022 under the 民法典 on facts of 2019 (as the
时间效力 provisions let it) was then judged against the law of 2019 (see the README's dated note).

    python -m lawluo bench checker --build-disc-judgments --controls benchmarks/data/checker_controls_judgments
"""

from __future__ import annotations

import re
from pathlib import Path

from ..database import StatuteDB
from .common import read_jsonl_rows
from .frozen import sha256
from .judgments import judgment_rows

DISC_FILE = "disc/qa_short_answer.jsonl"
DISC_SOURCE = "FudanDISC/DISC-LawLLM eval/datasets/subjective/qa_short_answer.json @ f40d023"
_COURT = re.compile(r"判决如下|本院认为")
_DATE = re.compile(r"((?:19|20)\d\d)年(\d{1,2})月(\d{1,2})日")


def facts_date(text: str) -> str | None:
    """The latest date written in the facts, ISO (``2021年11月19日`` → ``2021-11-19``), or None.

    >>> facts_date("2021年1月5日…2021年11月19日20时许")
    '2021-11-19'
    """
    dates = [
        (int(y), int(m), int(d)) for y, m, d in _DATE.findall(text) if 1 <= int(m) <= 12 and 1 <= int(d) <= 31
    ]
    return "{:04d}-{:02d}-{:02d}".format(*max(dates)) if dates else None


def build_disc_judgments(db: StatuteDB, data_dir: Path) -> tuple[dict, dict]:
    """``negative_judgment.jsonl``'s rows and the build's statistics."""
    outputs = list(read_jsonl_rows(data_dir / DISC_FILE))
    court = [src for src in outputs if _COURT.search(src.get("output") or "")]
    rows, stats = judgment_rows(
        db,
        (  # as_of None: the decision's date is unknown (the facts' date is not it)
            (
                src["output"].strip(),
                None,
                {"file": DISC_FILE, "id": src.get("id"), "facts_date": facts_date(src.get("input") or "")},
            )
            for src in court
        ),
    )
    stats = {"outputs": len(outputs), "court_outputs": len(court), **stats}
    stats.pop("judgments")
    stats["inputs"] = {
        "disc": {"path": DISC_FILE, "source": DISC_SOURCE, "sha256": sha256(data_dir / DISC_FILE)},
        "statute_db": {"sha256": sha256(db.path), "source": db.meta.get("source", "")},
    }
    return {"negative_judgment.jsonl": rows}, stats
