"""Building a whole set of controls (:func:`build`) and a held-out set from what an earlier one did not use
(:func:`build_held_out`)."""

from __future__ import annotations

import ast
import random
import re
from dataclasses import dataclass
from pathlib import Path

from ..database import Article, StatuteDB
from ..numerals import chinese_to_int
from .answers import _LAWS_ENTRY, negative_answer
from .common import (
    CAIL_ARTICLES_FILE,
    DRINK_LAWS,
    JUDGE_COMMIT,
    JUDGE_PATH,
    JUDGE_REPO,
    LAWYER_LLAMA_FILE,
    MULTI_TURN_FILE,
    SEED,
    ZIXUN_FILE,
    plain,
    read_jsonl_rows,
)
from .frozen import read_sums, sha256
from .judgments import negative_judgment
from .positive import positive_rows


def article_pools(
    db: StatuteDB, judge_rows: list[dict], counsel_rows: list[dict]
) -> tuple[list[Article], list[Article], list[Article]]:
    """The public articles the corruptions are made from: the 刑法 articles JuDGE's judgments apply
    (field ``la``), the 民法典 articles lawyer-llama's consultations were given, and the 饮酒/醉酒 laws."""
    criminal_law = db.current("刑法")
    criminal = sorted({n for r in judge_rows for n in r.get("la", [])})
    pool = [a for n in criminal if (a := db.article(criminal_law, n, 0)) is not None]
    civil_code = db.current("民法典")
    civil_numbers = set()
    for row in counsel_rows:
        for entry in row.get("laws") or []:
            m = _LAWS_ENTRY.match(entry.strip())
            if m and db.resolve(m.group("name")).key == "民法典":
                civil_numbers.add(chinese_to_int(m.group("num")))
    civil = [a for n in sorted(civil_numbers) if (a := db.article(civil_code, n, 0)) is not None]
    drink = [a for k in DRINK_LAWS for a in db.articles_of(db.current(k)) if "酒" in a.text]
    return pool + civil, civil, drink


def build(
    db: StatuteDB, judge_path: Path, data_dir: Path, held_out: HeldOut | None = None
) -> tuple[dict[str, list[dict]], dict]:
    """All three files' rows and the build's statistics (a held-out set's: :func:`build_held_out`)."""
    if held_out is not None:
        return build_held_out(db, judge_path, data_dir, held_out)
    judge_rows = list(read_jsonl_rows(judge_path))
    counsel_rows = list(read_jsonl_rows(data_dir / LAWYER_LLAMA_FILE))
    rng = random.Random(SEED)
    judgment, j_stats = negative_judgment(db, judge_rows)
    answer, a_stats, _used = negative_answer(db, counsel_rows, rng)
    pool, civil, drink = article_pools(db, judge_rows, counsel_rows)
    positive, p_stats = positive_rows(db, pool, civil, drink, rng)
    stats = {
        "negative_judgment": j_stats,
        "negative_answer": a_stats,
        "positive": p_stats,
        "pool": {"articles": len(pool), "civil_code": len(civil), "drink_laws": len(drink)},
        "inputs": {
            "judge": {
                "repository": JUDGE_REPO,
                "commit": JUDGE_COMMIT,
                "path": JUDGE_PATH,
                "sha256": sha256(judge_path),
            },
            "lawyer_llama": {"path": LAWYER_LLAMA_FILE, "sha256": sha256(data_dir / LAWYER_LLAMA_FILE)},
            "statute_db": {"sha256": sha256(db.path), "source": db.meta.get("source", "")},
        },
    }
    return {
        "negative_judgment.jsonl": judgment,
        "negative_answer.jsonl": answer,
        "positive.jsonl": positive,
    }, stats


@dataclass(frozen=True)
class HeldOut:
    """A held-out set built by the same rules as ``exclude`` (an earlier, frozen set) from what it did not use."""

    exclude: Path  #: the earlier controls folder
    seed: int  #: replaces :data:`SEED`
    judgments: int = 500  #: judgments drawn (seeded) from those of ``--judge-data`` the earlier set lacks
    judge_path: str = ""  #: the judgment file's path in JuDGE's repository (default ``data/<file name>``)


def _key_text(text: str) -> str:
    """A judgment's opening, normalised: the same judgment in two files (or in a row, whose appendix
    entries may be cut) has the same key."""
    return plain(text)[:300]


def _used_by(folder: Path) -> dict[str, set]:
    """What the controls in ``folder`` used: judgments (text_id, opening), lawyer-llama (file, line) and
    the queries of those lines, the positive rows' source articles."""
    used: dict[str, set] = {"text_id": set(), "opening": set(), "counsel": set(), "articles": set()}
    for path in sorted(folder.glob("*.jsonl")):
        for row in read_jsonl_rows(path):
            src = row.get("source") or {}
            if row.get("style") == "judgment":
                used["text_id"].add(src.get("text_id"))
                used["opening"].add(_key_text(row["text"]))
            elif row.get("control") == "negative" and "file" in src:
                used["counsel"].add((src["file"], src["line"]))
            if row.get("control") == "positive":
                used["articles"].add((src["key"], src["version"], src["article"], src["suffix"]))
    return used


def _first_lawyer_turn(history: list[str]) -> str:
    for turn in history or []:
        if turn.startswith("[律师]"):
            return turn[len("[律师]") :].strip()
    return ""


def _fresh_judgments(judge_all: list[dict], used: dict[str, set]) -> tuple[list[dict], dict[str, int]]:
    """The judgments whose ``text_id`` and opening the earlier set lacks, duplicates within the file dropped;
    and how many were dropped for each reason."""
    j_seen: set[str] = set()
    fresh, dropped = [], {"text_id_in_earlier": 0, "text_in_earlier": 0, "duplicate_in_file": 0}
    for r in judge_all:
        key = _key_text(r["fd"].strip())
        if r["text_id"] in used["text_id"]:
            dropped["text_id_in_earlier"] += 1
        elif key in used["opening"]:
            dropped["text_in_earlier"] += 1
        elif key in j_seen:
            dropped["duplicate_in_file"] += 1
        else:
            j_seen.add(key)
            fresh.append(r)
    return fresh, dropped


def _fresh_counsel(
    single: list[dict], multi: list[dict], used: dict[str, set]
) -> tuple[list[dict], dict[str, int]]:
    """The consultations the earlier set did not draw (single-turn, then multi-turn with the first lawyer
    turn as the answer), a query it drew or a repeated query dropped; and how many were dropped, by reason."""
    used_queries = {
        single[line - 1].get("query", "").strip()
        for f, line in used["counsel"]
        if f == LAWYER_LLAMA_FILE and 0 < line <= len(single)
    }
    counsel, c_dropped = [], {"drawn_by_earlier": 0, "query_drawn_by_earlier": 0, "duplicate_query": 0}
    seen_q: set[str] = set()
    for name, rows in ((LAWYER_LLAMA_FILE, single), (MULTI_TURN_FILE, multi)):
        for i, r in enumerate(rows):
            q = r.get("query", "").strip()
            if (name, i + 1) in used["counsel"]:
                c_dropped["drawn_by_earlier"] += 1
            elif q in used_queries:
                c_dropped["query_drawn_by_earlier"] += 1
            elif q in seen_q:
                c_dropped["duplicate_query"] += 1
            else:
                seen_q.add(q)
                response = r["response"] if "response" in r else _first_lawyer_turn(r.get("history", []))
                counsel.append({**r, "response": response, "_file": name, "_line": i + 1})
    return counsel, c_dropped


def _pool_only_rows(data_dir: Path) -> tuple[list[dict], list[dict]]:
    """The lists of articles applied that only widen the pool: CAIL2018's 刑法 articles (as JuDGE's ``la``)
    and the ``laws`` of lawyer-llama's GPT-4 consultations."""
    cail = [
        {"la": [int(n) for n in re.findall(r"刑法第(\d+)条", r.get("output", ""))]}
        for r in read_jsonl_rows(data_dir / CAIL_ARTICLES_FILE)
    ]
    zixun = [
        {"laws": ast.literal_eval(r["laws"]) if isinstance(r.get("laws"), str) else r.get("laws") or []}
        for r in read_jsonl_rows(data_dir / ZIXUN_FILE)
    ]
    return cail, zixun


def _held_out_inputs(db: StatuteDB, judge_path: Path, label: str, data_dir: Path) -> dict:
    """The held-out build's inputs with their checksums (``build_stats.json``)."""
    return {
        "judge": {
            "repository": JUDGE_REPO,
            "commit": JUDGE_COMMIT,
            "path": label,
            "sha256": sha256(judge_path),
        },
        "lawyer_llama": {"path": LAWYER_LLAMA_FILE, "sha256": sha256(data_dir / LAWYER_LLAMA_FILE)},
        "lawyer_llama_multi_turn": {
            "path": MULTI_TURN_FILE,
            "sha256": sha256(data_dir / MULTI_TURN_FILE),
        },
        "pool_only": {
            name: {"path": name, "sha256": sha256(data_dir / name)}
            for name in (CAIL_ARTICLES_FILE, ZIXUN_FILE)
        },
        "statute_db": {"sha256": sha256(db.path), "source": db.meta.get("source", "")},
    }


def build_held_out(
    db: StatuteDB, judge_path: Path, data_dir: Path, held_out: HeldOut
) -> tuple[dict[str, list[dict]], dict]:
    """A held-out set: the same rules, sizes and row format as :func:`build`, from the rows ``held_out.exclude``
    did not use. Judgments: those of ``judge_path`` whose ``text_id`` and opening (:func:`_key_text`) the
    earlier set lacks, duplicates within the file dropped, ``held_out.judgments`` drawn (seeded); none left,
    no ``negative_judgment.jsonl``. Answers: the single-turn consultations the earlier set did not draw and
    the multi-turn dialogues (first lawyer turn as the answer), a query the earlier set drew dropped.
    Positive: the same kinds of public articles (JuDGE's ``la``, lawyer-llama's ``laws`` of both files, the
    饮酒/醉酒 laws), widened by :data:`CAIL_ARTICLES_FILE` and :data:`ZIXUN_FILE`; corruptions of the earlier
    positive rows' articles taken last."""
    used = _used_by(held_out.exclude)
    label = held_out.judge_path or f"data/{judge_path.name}"
    judge_all = list(read_jsonl_rows(judge_path))
    fresh, dropped = _fresh_judgments(judge_all, used)
    rng = random.Random(held_out.seed)
    picked = sorted(rng.sample(range(len(fresh)), min(held_out.judgments, len(fresh))))
    judgment, j_stats = negative_judgment(db, [fresh[i] for i in picked], label)
    j_stats.update({"in_file": len(judge_all), "not_in_earlier": len(fresh), "dropped": dropped})

    single = list(read_jsonl_rows(data_dir / LAWYER_LLAMA_FILE))
    multi = list(read_jsonl_rows(data_dir / MULTI_TURN_FILE))
    counsel, c_dropped = _fresh_counsel(single, multi, used)
    answer, a_stats, _used = negative_answer(db, counsel, rng)
    a_stats["dropped"] = c_dropped
    a_stats["from_multi_turn"] = sum(r["source"]["file"] == MULTI_TURN_FILE for r in answer)

    cail, zixun = _pool_only_rows(data_dir)
    pool, civil, drink = article_pools(db, judge_all + cail, single + multi + zixun)
    avoid = frozenset(used["articles"])
    positive, p_stats = positive_rows(db, pool, civil, drink, rng, avoid=avoid)
    stats = {
        "held_out_from": {"folder": held_out.exclude.name, "sums": read_sums(held_out.exclude)},
        "seed": held_out.seed,
        "negative_judgment": j_stats,
        "negative_answer": a_stats,
        "positive": p_stats,
        "pool": {
            "articles": len(pool),
            "civil_code": len(civil),
            "drink_laws": len(drink),
            "avoided_articles": len(avoid),
        },
        "inputs": _held_out_inputs(db, judge_path, label, data_dir),
    }
    files = {"negative_judgment.jsonl": judgment, "negative_answer.jsonl": answer, "positive.jsonl": positive}
    if not judgment:
        del files["negative_judgment.jsonl"]
    return files, stats
