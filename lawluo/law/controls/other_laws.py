"""Held-out controls over *other laws* (issue 40, item 4): v3, built and frozen before the checker change it tests.

The first two sets (``benchmarks/data/checker_controls`` v1 and ``…_v2``) quote 刑法 and 民法典 almost only,
and both have now been read while the checker was changed. This set asks whether the checker's rules carry
over to laws it was never developed on: the laws, other than 刑法 and 民法典, that public answers cite
(:func:`cited_laws`: DISC-Law-SFT's answers, lawyer-llama's GPT-4 consultations and KINLED's
consultations; the laws are counted, never hand-picked), with the same citation forms, corruption kinds,
sizes and rules as :mod:`lawluo.law.controls`:

- **negative** (answer style): correct citations of those laws' articles (the article's text or a
  contiguous part of it, or name and number only) in the forms answers use, inside the sentences of real
  answers that cite nothing (lawyer-llama's ``legal_advice.jsonl``, 5,000 scraped consultations, never
  used by v1 or v2);
- **positive**: one corrupted citation per row, made from those laws' articles; an article v1's or v2's
  positive rows were made from is used only when a kind runs out of others (``repealed`` and
  ``outdated_version`` draw, as before, on the 民法典 and on the laws with older versions).

    python -m lawluo bench checker --build-other-laws --controls benchmarks/data/checker_controls_v3 \
        --held-out-from benchmarks/data/checker_controls --held-out-from benchmarks/data/checker_controls_v2
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

from ..database import Article, StatuteDB
from .answers import Source, _add, _cite, _part, _plain_sentences
from .common import ANSWER_ROWS, DRINK_LAWS, ZIXUN_FILE, contained, negative_row, plain, read_jsonl_rows
from .frozen import read_sums, sha256
from .positive import positive_rows
from .sets import _used_by

SEED = 42
#: Public answers whose 《…》 citations say which laws people cite (only the law names are read).
CITING_FILES = ("disc/qa_short_answer.jsonl", ZIXUN_FILE, "lawluo_kinled/consult_995.json")
#: Real answers whose sentences that cite nothing carry the negative control's citations.
PROSE_FILE = "lawyer_llama/legal_advice.jsonl"
#: The laws v1 and v2 were built on; this set is about the others.
EARLIER_LAWS = ("刑法", "民法典")
#: Laws taken: the most cited (at least :data:`MIN_CITED` times) in :data:`CITING_FILES`.
TOP_LAWS = 30
MIN_CITED = 2
_TITLE = re.compile(r"《([^《》\n]{2,60})》")


def cited_laws(db: StatuteDB, data_dir: Path) -> list[tuple[str, int]]:
    """(law key, times cited) of the laws in force, other than :data:`EARLIER_LAWS`, most cited first."""
    counts: Counter[str] = Counter()
    for name in CITING_FILES:
        text = (data_dir / name).read_text(encoding="utf-8")
        for title in _TITLE.findall(text):
            res = db.resolve(title)
            if res.key and res.key not in EARLIER_LAWS and res.repeal is None:
                counts[res.key] += 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(k, n) for k, n in ranked if n >= MIN_CITED and db.current(k) is not None][:TOP_LAWS]


def _prose(data_dir: Path) -> list[str]:
    """Answers' sentences that cite nothing, two per answer, from :data:`PROSE_FILE`."""
    out = []
    for row in read_jsonl_rows(data_dir / PROSE_FILE):
        for turn in row if isinstance(row, list) else [row]:
            sentences = _plain_sentences(turn.get("output", ""))
            if len(sentences) >= 2 and not _TITLE.search(turn.get("output", "")):
                out.append("".join(sentences[:2]))
    return out


def negative_rows(rng: random.Random, pool: list[Article], prose: list[str]) -> tuple[list[dict], dict]:
    """:data:`ANSWER_ROWS` rows, each one to three correct citations of the pool's articles in prose."""
    rows, stats = [], {"rows": 0, "expected": 0, "prose_available": len(prose), "quotes_rejected": 0}
    for n in range(ANSWER_ROWS):
        paras, expected = [rng.choice(prose)], {}
        for art in rng.sample(pool, rng.choice((1, 2, 2, 3))):
            src = Source(art, art.law.name)
            if rng.random() < 0.2:
                form, cite = _cite(rng, art.law, art.number, art.suffix, None)
                verdict = "no_content"
            else:
                part = _part(rng, art.text)
                if not contained(part, art.text):  # by construction it is; the rule is checked anyway
                    stats["quotes_rejected"] += 1
                    continue
                form, cite = _cite(rng, art.law, art.number, art.suffix, part, part=art.text)
                verdict = "verified"
            paras.append(cite)
            _add(expected, src, verdict, form)
        if not expected:
            continue
        source = {"file": PROSE_FILE, "laws": sorted({c["key"] for c in expected.values()})}
        rows.append(
            negative_row(n + 1, "answer", "\n".join(paras), None, list(expected.values()), [], source)
        )
        stats["expected"] += len(expected)
    stats["rows"] = len(rows)
    return rows, stats


def build_other_laws(
    db: StatuteDB, data_dir: Path, earlier: list[Path], seed: int = SEED
) -> tuple[dict, dict]:
    """The v3 files' rows and the build's statistics (see the module's docstring)."""
    laws = cited_laws(db, data_dir)
    pool = [a for key, _n in laws for a in db.articles_of(db.current(key)) if len(plain(a.text)) >= 15]
    civil = list(db.articles_of(db.current("民法典")))
    drink = [a for k in DRINK_LAWS for a in db.articles_of(db.current(k)) if "酒" in a.text]
    avoid: set[tuple] = set()
    for folder in earlier:
        avoid |= _used_by(folder)["articles"]
    rng = random.Random(seed)
    negative, n_stats = negative_rows(rng, pool, _prose(data_dir))
    positive, p_stats = positive_rows(db, pool, civil, drink, rng, avoid=frozenset(avoid))
    stats = {
        "held_out_from": {f.name: read_sums(f) for f in earlier},
        "seed": seed,
        "laws": dict(laws),
        "negative_answer": n_stats,
        "positive": p_stats,
        "pool": {
            "articles": len(pool),
            "civil_code": len(civil),
            "drink_laws": len(drink),
            "avoided": len(avoid),
        },
        "inputs": {
            name: {"path": name, "sha256": sha256(data_dir / name)} for name in (*CITING_FILES, PROSE_FILE)
        },
        "statute_db": {"sha256": sha256(db.path), "source": db.meta.get("source", "")},
    }
    return {"negative_answer.jsonl": negative, "positive.jsonl": positive}, json.loads(json.dumps(stats))
