"""The citation checker's published precision: false alarms on real citations, recall on corrupted ones.

    python -m lawluo bench checker [--controls DIR] [--json] [--out FILE] [--examples N]
    python -m lawluo bench checker --build-controls --judge-data JuDGE/data/test.json [--data ../shared/data]
    python -m lawluo bench checker --build-controls --held-out-from benchmarks/data/checker_controls \
        --controls-seed 41 --judge-data JuDGE/data/test.json --controls benchmarks/data/checker_controls_v2
    python -m lawluo.law.checker_bench …      # the same, in a checkout whose cli.py has no `bench checker`

The controls (:mod:`lawluo.law.controls`, frozen in ``benchmarks/data/checker_controls``) are rows of text,
each with the citations it makes and what the checker should say of them. The checker reads each row's
text (with the row's ``as_of`` date where its ``check`` takes one); its citations are matched to the
expected ones by (law key, article, suffix). An expected citation gets one verdict: the first
hallucinated verdict among the checker's citations that match it, else a content-bearing one, else
``no_content``; none when the extractor found no matching citation (a *miss*).

- **False-alarm rate** (negative control): the share of real, correct citations given a hallucinated
  verdict (``verdicts.HALLUCINATED``). Target ≤ 2 %.
- **Recall** (positive control): the share of corrupted citations given a hallucinated verdict, overall
  and per corruption kind. Target ≥ 95 %.
- **Per-verdict precision and recall**: each expected citation's verdict (the row's ``verdict``) against
  the verdict given, over both controls.

Intervals are 95 % percentile bootstrap intervals over rows (Efron & Tibshirani, *An Introduction to the
Bootstrap*, 1993, §13.3): rows are resampled with replacement within each control and style (or kind),
so the citations of one text stay together; seeded.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .verdicts import CONTENT_BEARING, HALLUCINATED, VERDICTS

FALSE_ALARM_TARGET = 0.02
RECALL_TARGET = 0.95
RESAMPLES = 2000
SEED = 0
DEFAULT_CONTROLS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "checker_controls"
#: The verdicts a control row may expect: the checker's table (``verdicts.VERDICTS``) at the time the
#: controls were frozen. An older checker that lacks one of them still runs (it never gives it).
CONTROL_VERDICTS = (
    "verified",
    "wrong_number",
    "content_mismatch",
    "not_found",
    "repealed",
    "outdated_version",
    "amended_since",
    "no_content",
)
REQUIRED = {"id": str, "control": str, "style": str, "text": str, "citations": list}
CITATION_REQUIRED = {"key": str, "article": int, "suffix": int, "expect": str, "verdict": str}


if TYPE_CHECKING:
    import numpy as np


class ControlsError(ValueError):
    """The controls folder is missing or a file in it is malformed; the message says which and where."""


# -- reading the controls -----------------------------------------------------------------------


def load_controls(folder: Path | str) -> tuple[list[dict], list[str]]:
    """Every row of every ``*.jsonl`` in ``folder``, validated; and notes (a file that differs from ``SHA256SUMS``)."""
    from ..jsonl import JSONLError, read_jsonl
    from .controls import read_sums, sha256

    folder = Path(folder)
    if not folder.is_dir():
        raise ControlsError(
            f"controls folder {folder} not found; build it with `python -m lawluo bench checker --build-controls "
            "--judge-data JuDGE/data/test.json` (lawluo/law/controls.py)"
        )
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise ControlsError(f"controls folder {folder} holds no .jsonl file")
    rows, notes, seen = [], [], set()
    sums = read_sums(folder)
    for path in files:
        if path.name in sums and sums[path.name] != sha256(path):
            notes.append(
                f"{path.name} differs from its frozen SHA256SUMS entry: the figures are not the published ones"
            )
        try:
            lines = read_jsonl(path)
        except JSONLError as exc:
            raise ControlsError(str(exc)) from None
        for n, row in lines:
            _validate(row, f"{path}:{n}")
            if row["id"] in seen:
                raise ControlsError(f"{path}:{n}: id {row['id']!r} occurs twice")
            seen.add(row["id"])
            rows.append(row)
    return rows, notes


def _validate(row: dict, where: str) -> None:
    for name, kind in REQUIRED.items():
        if not isinstance(row.get(name), kind):
            raise ControlsError(f"{where}: field {name!r} missing or not a {kind.__name__}")
    if row["control"] not in ("negative", "positive"):
        raise ControlsError(f"{where}: control must be 'negative' or 'positive', not {row['control']!r}")
    if row["control"] == "positive" and not isinstance(row.get("kind"), str):
        raise ControlsError(f"{where}: a positive row needs its corruption 'kind'")
    as_of = row.get("as_of")
    if as_of is not None and not (
        isinstance(as_of, str) and len(as_of) == 10 and as_of[4] == as_of[7] == "-"
    ):
        raise ControlsError(f"{where}: as_of must be an ISO date YYYY-MM-DD or null, not {as_of!r}")
    for i, cit in enumerate(row["citations"]):
        if not isinstance(cit, dict):
            raise ControlsError(f"{where}: citation {i} is not an object")
        for name, kind in CITATION_REQUIRED.items():
            if not isinstance(cit.get(name), kind):
                raise ControlsError(f"{where}: citation {i}: field {name!r} missing or not a {kind.__name__}")
        if cit["expect"] not in ("hallucinated", "not_hallucinated"):
            raise ControlsError(f"{where}: citation {i}: expect must be 'hallucinated' or 'not_hallucinated'")
        if cit["verdict"] not in CONTROL_VERDICTS and cit["verdict"] not in VERDICTS:
            raise ControlsError(f"{where}: citation {i}: unknown verdict {cit['verdict']!r}")


# -- running the checker ------------------------------------------------------------------------


def check_text(checker, text: str, as_of: str | None):
    """``checker.check(text, as_of=…)`` where ``check`` takes a date, else ``checker.check(text)``."""
    try:
        takes_date = "as_of" in inspect.signature(checker.check).parameters
    except (TypeError, ValueError):
        takes_date = False
    return checker.check(text, as_of=as_of) if takes_date else checker.check(text)


def takes_as_of(checker) -> bool:
    return "as_of" in inspect.signature(checker.check).parameters


def citation_key(citation) -> str | None:
    """The law key a checker citation is matched on (a repealed law's own key when no version is in force)."""
    from .names import name_key, split_part

    if getattr(citation, "key", None):
        return citation.key
    res = getattr(citation, "resolution", None)
    if res is not None:
        if getattr(res, "key", None):
            return res.key
        if getattr(res, "repeal", None) is not None:
            return res.repeal.key
    return split_part(name_key(citation.law))[0]


def found_citations(result) -> list[dict]:
    """A check's citations as plain dicts: what the scoring needs."""
    out = []
    for checked in result.citations:
        c = checked.citation
        out.append(
            {
                "key": citation_key(c),
                "article": c.article,
                "suffix": c.suffix,
                "verdict": checked.verdict,
                "span": [c.start, c.end],
                "quoted": c.quoted,
                "note": checked.note,
            }
        )
    return out


# -- scoring ------------------------------------------------------------------------------------


def given_verdict(matched: Iterable[dict]) -> str | None:
    """One verdict for an expected citation from the checker's citations that match it.

    >>> given_verdict([{"verdict": "no_content"}, {"verdict": "verified"}])
    'verified'
    >>> given_verdict([{"verdict": "verified"}, {"verdict": "wrong_number"}]), given_verdict([])
    ('wrong_number', None)
    """
    verdicts = [m["verdict"] for m in matched]
    if not verdicts:
        return None
    for pick in (lambda v: v in HALLUCINATED, lambda v: v in CONTENT_BEARING):
        hit = next((v for v in verdicts if pick(v)), None)
        if hit is not None:
            return hit
    return verdicts[0]


@dataclass
class Scored:
    """One expected citation with the verdict it was given (``None``: the extractor missed it)."""

    row: str
    control: str
    group: str  # style (negative) or corruption kind (positive)
    key: str
    article: int
    suffix: int
    expected: str  # the verdict it should get
    given: str | None
    span: tuple[int, int] | None
    note: str = ""

    @property
    def alarm(self) -> bool:
        return self.given in HALLUCINATED


@dataclass
class Unexpected:
    """A checker citation that matches no expected or excluded citation of its row."""

    row: str
    control: str
    group: str
    key: str | None
    article: int
    suffix: int
    verdict: str
    span: tuple[int, int]


def score_row(row: dict, found: list[dict]) -> tuple[list[Scored], list[Unexpected], list[str]]:
    """The row's expected citations with their verdicts; the checker's other citations; the verdicts of
    the excluded ones (real citations the controls do not score, e.g. a law the database lacks)."""
    group = row.get("kind") if row["control"] == "positive" else row["style"]
    by_ident: dict[tuple, list[dict]] = defaultdict(list)
    for f in found:
        by_ident[(f["key"], f["article"], f["suffix"])].append(f)
    scored = []
    for cit in row["citations"]:
        ident = (cit["key"], cit["article"], cit["suffix"])
        matched = by_ident.get(ident, [])
        given = given_verdict(matched)
        first = next((m for m in matched if m["verdict"] == given), None)
        scored.append(
            Scored(
                row["id"],
                row["control"],
                group,
                cit["key"],
                cit["article"],
                cit["suffix"],
                cit["verdict"],
                given,
                tuple(first["span"]) if first else None,
                first["note"] if first else "",
            )
        )
    known = {(c["key"], c["article"], c["suffix"]) for c in row["citations"]}
    excluded_idents = {(_excluded_key(e), e["article"], e["suffix"]) for e in row.get("excluded", [])}
    unexpected, excluded_verdicts = [], []
    for f in found:
        ident = (f["key"], f["article"], f["suffix"])
        if ident in known:
            continue
        if ident in excluded_idents or (None, f["article"], f["suffix"]) in excluded_idents:
            excluded_verdicts.append(f["verdict"])
            continue
        unexpected.append(
            Unexpected(
                row["id"],
                row["control"],
                group,
                f["key"],
                f["article"],
                f["suffix"],
                f["verdict"],
                tuple(f["span"]),
            )
        )
    return scored, unexpected, excluded_verdicts


def _excluded_key(entry: dict) -> str | None:
    from .names import name_key, split_part

    return entry.get("key") or split_part(name_key(entry.get("law", "")))[0]


# -- statistics ---------------------------------------------------------------------------------


def bootstrap_ratio(
    num: np.ndarray,
    den: np.ndarray,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float, float]:
    """``sum(num) / sum(den)`` and its 95 % percentile bootstrap interval, resampling rows (the arrays'
    entries) with replacement. ``nan`` when the denominator is 0.

    >>> r, lo, hi = bootstrap_ratio([1, 0, 0, 0], [1, 1, 1, 1], 2000, 0)
    >>> r, lo <= r <= hi, lo >= 0.0, hi <= 1.0
    (0.25, True, True, True)
    """
    import numpy as np

    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    total = den.sum()
    if total == 0:
        return float("nan"), float("nan"), float("nan")
    point = float(num.sum() / total)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(den), size=(resamples, len(den)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    lo, hi = np.nanpercentile(ratios, [2.5, 97.5])
    return point, float(lo), float(hi)


def _by_row(
    items: list[Scored], test: Callable[[Scored], bool], base: Callable[[Scored], bool] = lambda s: True
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row counts of citations passing ``test`` among those passing ``base``."""
    import numpy as np

    num: dict[str, int] = defaultdict(int)
    den: dict[str, int] = defaultdict(int)
    rows = []
    for s in items:
        if s.row not in den:
            rows.append(s.row)
            den[s.row] = 0
        if base(s):
            den[s.row] += 1
            num[s.row] += bool(test(s))
    return np.array([num[r] for r in rows]), np.array([den[r] for r in rows])


def rate(
    items: list[Scored],
    test: Callable[[Scored], bool],
    base: Callable[[Scored], bool] = lambda s: True,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict:
    """``{"n", "k", "rate", "lo", "hi"}``: how many of ``items`` (that pass ``base``) pass ``test``, with CI."""
    num, den = _by_row(items, test, base)
    r, lo, hi = bootstrap_ratio(num, den, resamples, seed)
    return {"n": int(den.sum()), "k": int(num.sum()), "rate": r, "lo": lo, "hi": hi}


def per_verdict(items: list[Scored], resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, dict]:
    """Precision and recall of each verdict (expected vs given), rows resampled within each control."""
    out = {}
    groups = defaultdict(list)
    for s in items:
        groups[s.control].append(s)
    for v in _all_verdicts():
        tp_parts, given_parts, expected_parts = [], [], []
        for control in sorted(groups):
            g = groups[control]
            tp, _ = _by_row(g, lambda s, v=v: s.given == v and s.expected == v)
            given, _ = _by_row(g, lambda s, v=v: s.given == v)
            expected, _ = _by_row(g, lambda s, v=v: s.expected == v)
            tp_parts.append(tp)
            given_parts.append(given)
            expected_parts.append(expected)
        out[v] = {
            "given": int(sum(p.sum() for p in given_parts)),
            "expected": int(sum(p.sum() for p in expected_parts)),
            "correct": int(sum(p.sum() for p in tp_parts)),
            "precision": _stratified(tp_parts, given_parts, resamples, seed),
            "recall": _stratified(tp_parts, expected_parts, resamples, seed),
        }
    return out


def _all_verdicts() -> tuple[str, ...]:
    return tuple(VERDICTS) + tuple(v for v in CONTROL_VERDICTS if v not in VERDICTS)


def _stratified(nums: list[np.ndarray], dens: list[np.ndarray], resamples: int, seed: int) -> dict:
    import numpy as np

    total = sum(d.sum() for d in dens)
    if total == 0:
        return {"rate": float("nan"), "lo": float("nan"), "hi": float("nan")}
    rng = np.random.default_rng(seed)
    num_sum = np.zeros(resamples)
    den_sum = np.zeros(resamples)
    for num, den in zip(nums, dens, strict=True):
        if len(den) == 0:
            continue
        idx = rng.integers(0, len(den), size=(resamples, len(den)))
        num_sum += num[idx].sum(axis=1)
        den_sum += den[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = num_sum / den_sum
    lo, hi = np.nanpercentile(ratios, [2.5, 97.5])
    return {"rate": float(sum(n.sum() for n in nums) / total), "lo": float(lo), "hi": float(hi)}


def summarise(
    scored: list[Scored],
    unexpected: list[Unexpected],
    excluded: list[str],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict:
    """Every figure the bench prints, as one JSON-ready dict."""
    neg = [s for s in scored if s.control == "negative"]
    pos = [s for s in scored if s.control == "positive"]
    alarm = lambda s: s.alarm  # noqa: E731
    summary = {
        "false_alarms": {"overall": rate(neg, alarm, resamples=resamples, seed=seed)},
        "recall": {"overall": rate(pos, alarm, resamples=resamples, seed=seed)},
        "per_verdict": per_verdict(scored, resamples, seed),
        "missed": {},
        "targets": {"false_alarm_rate_max": FALSE_ALARM_TARGET, "recall_min": RECALL_TARGET},
    }
    for group in sorted({s.group for s in neg}):
        g = [s for s in neg if s.group == group]
        summary["false_alarms"][group] = rate(g, alarm, resamples=resamples, seed=seed)
        summary["false_alarms"][f"{group}, content-bearing"] = rate(
            g, alarm, lambda s: s.expected in ("verified", "amended_since"), resamples, seed
        )
        summary["false_alarms"][f"{group}, name and number only"] = rate(
            g, alarm, lambda s: s.expected == "no_content", resamples, seed
        )
    for group in sorted({s.group for s in pos}):
        g = [s for s in pos if s.group == group]
        summary["recall"][group] = rate(g, alarm, resamples=resamples, seed=seed)
        summary["recall"][group]["exact"] = sum(s.given == s.expected for s in g)
    for control, items in (("negative", neg), ("positive", pos)):
        for group in sorted({s.group for s in items}):
            g = [s for s in items if s.group == group]
            summary["missed"][f"{control}/{group}"] = {
                "missed": sum(s.given is None for s in g),
                "of": len(g),
            }
    summary["unexpected"] = {
        "citations": len(unexpected),
        "hallucinated": sum(u.verdict in HALLUCINATED for u in unexpected),
        "by_group": dict(Counter(f"{u.control}/{u.group}" for u in unexpected if u.verdict in HALLUCINATED)),
    }
    summary["excluded"] = {"checked": len(excluded), "verdicts": dict(Counter(excluded))}
    summary["confusion"] = {
        e: dict(Counter(s.given or "missed" for s in scored if s.expected == e))
        for e in _all_verdicts()
        if any(s.expected == e for s in scored)
    }
    return summary


def common_errors(scored: list[Scored], texts: dict[str, str], top: int = 15) -> dict[str, list[dict]]:
    """The most common false alarms and misses, grouped by (style or kind, expected, given, law), each with
    one example passage."""

    def groups(items: list[Scored]) -> list[dict]:
        bucket: dict[tuple, list[Scored]] = defaultdict(list)
        for s in items:
            bucket[(s.control, s.group, s.expected, s.given or "missed", s.key)].append(s)
        ranked = sorted(bucket.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
        out = []
        for (control, group, expected, given, key), members in ranked:
            ex = members[0]
            span = ex.span or _label_span(texts[ex.row], ex.article, ex.suffix)
            out.append(
                {
                    "control": control,
                    "group": group,
                    "expected": expected,
                    "given": given,
                    "law": key,
                    "count": len(members),
                    "example": {
                        "row": ex.row,
                        "article": ex.article,
                        "suffix": ex.suffix,
                        "note": ex.note,
                        "passage": excerpt(texts[ex.row], span),
                    },
                }
            )
        return out

    alarms = [s for s in scored if s.control == "negative" and s.alarm]
    misses = [s for s in scored if s.control == "positive" and not s.alarm]
    not_found = [s for s in scored if s.given is None]
    return {"false_alarms": groups(alarms), "misses": groups(misses), "extractor_missed": groups(not_found)}


def _label_span(text: str, article: int, suffix: int) -> tuple[int, int] | None:
    """Where the text writes an article's number (for a citation the extractor did not find)."""
    from .numerals import int_to_chinese

    tail = f"条之{int_to_chinese(suffix)}" if suffix else "条"
    for label in (
        f"第{int_to_chinese(article)}{tail}",
        f"第{article}{tail}",
        f"{int_to_chinese(article)}{tail}",
        f"第{int_to_chinese(article)}",
    ):
        at = text.find(label)
        if at >= 0:
            return at, at + len(label)
    return None


def excerpt(text: str, span: tuple[int, int] | None, before: int = 40, after: int = 140) -> str:
    """The passage around a citation (the row's opening when the citation was not found)."""
    if span is None:
        return text[: before + after].replace("\n", "⏎") + ("…" if len(text) > before + after else "")
    start, end = max(0, span[0] - before), min(len(text), span[1] + after)
    return ("…" if start else "") + text[start:end].replace("\n", "⏎") + ("…" if end < len(text) else "")


# -- the report ---------------------------------------------------------------------------------


def _pct(d: dict) -> str:
    if d["rate"] != d["rate"]:
        return "–"
    return f"{100 * d['rate']:.1f} % [{100 * d['lo']:.1f}, {100 * d['hi']:.1f}]"


def markdown(summary: dict, errors: dict, meta: dict) -> str:
    """The report the bench prints."""
    t = summary["targets"]
    lines = [
        f"Checker: {meta['checker']}; controls: {meta['controls']} ({meta['rows']} rows); "
        f"check(…, as_of) {'used' if meta['as_of'] else 'not available: rows checked without their date'}; "
        f"{meta['seconds']:.0f} s; 95 % bootstrap intervals over rows ({meta['resamples']} resamples, seed {meta['seed']}).",
        "",
        f"**False alarms** on real, correct citations (target ≤ {100 * t['false_alarm_rate_max']:.0f} %):",
        "",
        "| negative control | citations | hallucinated verdict | rate [95 % CI] | meets target |",
        "|---|---|---|---|---|",
    ]
    for name, d in summary["false_alarms"].items():
        meets = "yes" if d["rate"] == d["rate"] and d["rate"] <= t["false_alarm_rate_max"] else "no"
        lines.append(f"| {name} | {d['n']:,} | {d['k']:,} | {_pct(d)} | {meets} |")
    lines += [
        "",
        f"**Recall** on corrupted citations (target ≥ {100 * t['recall_min']:.0f} %):",
        "",
        "| positive control | citations | caught (any hallucinated verdict) | recall [95 % CI] | exact verdict | meets target |",
        "|---|---|---|---|---|---|",
    ]
    for name, d in summary["recall"].items():
        meets = "yes" if d["rate"] == d["rate"] and d["rate"] >= t["recall_min"] else "no"
        exact = d.get("exact", "")
        lines.append(f"| {name} | {d['n']:,} | {d['k']:,} | {_pct(d)} | {exact} | {meets} |")
    lines += [
        "",
        "**Per verdict** (expected vs given, both controls):",
        "",
        "| verdict | expected | given | both | precision [95 % CI] | recall [95 % CI] |",
        "|---|---|---|---|---|---|",
    ]
    for v, d in summary["per_verdict"].items():
        if d["given"] or d["expected"]:
            lines.append(
                f"| {v} | {d['expected']:,} | {d['given']:,} | {d['correct']:,} | {_pct(d['precision'])} | {_pct(d['recall'])} |"
            )
    lines += ["", "**Confusion** (expected → given):", ""]
    for e, row in summary["confusion"].items():
        lines.append(
            f"- {e}: " + ", ".join(f"{g} {n:,}" for g, n in sorted(row.items(), key=lambda kv: -kv[1]))
        )
    lines += [
        "",
        "**Expected citations the extractor missed:** "
        + ", ".join(f"{k} {d['missed']:,}/{d['of']:,}" for k, d in summary["missed"].items()),
    ]
    u, x = summary["unexpected"], summary["excluded"]
    lines += [
        f"**Other citations the checker found** (in no row's expected or excluded list): {u['citations']:,}, "
        f"{u['hallucinated']:,} called hallucinated ({', '.join(f'{k} {n}' for k, n in sorted(u['by_group'].items())) or 'none'}).",
        f"**Excluded real citations** (a law or version the database lacks; not scored): {x['checked']:,} checked: "
        + (", ".join(f"{k} {n}" for k, n in sorted(x["verdicts"].items(), key=lambda kv: -kv[1])) or "none")
        + ".",
    ]
    for title, key in (
        ("Most common false alarms", "false_alarms"),
        ("Most common misses", "misses"),
        ("Most common extractor misses", "extractor_missed"),
    ):
        if errors.get(key):
            lines += ["", f"**{title}** (style or kind, expected → given, law: count; one example):", ""]
            for e in errors[key]:
                ex = e["example"]
                lines.append(
                    f"- {e['control']}/{e['group']}, {e['expected']} → {e['given']}, {e['law']}: {e['count']} — "
                    f"`{ex['row']}` art. {ex['article']}{'之' + str(ex['suffix']) if ex['suffix'] else ''}"
                    f"{' (' + ex['note'] + ')' if ex['note'] else ''}: {ex['passage']}"
                )
    return "\n".join(lines) + "\n"


# -- the command --------------------------------------------------------------------------------


def run(
    rows: list[dict], checker, progress: Callable[[int], None] | None = None
) -> tuple[list[Scored], list[Unexpected], list[str]]:
    scored, unexpected, excluded = [], [], []
    for i, row in enumerate(rows):
        found = found_citations(check_text(checker, row["text"], row.get("as_of")))
        s, u, x = score_row(row, found)
        scored += s
        unexpected += u
        excluded += x
        if progress:
            progress(i + 1)
    return scored, unexpected, excluded


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--controls",
        default=None,
        help=f"the controls folder (default {DEFAULT_CONTROLS.relative_to(DEFAULT_CONTROLS.parents[2])})",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the figures (and every scored citation) as JSON"
    )
    parser.add_argument("--out", help="also write what is printed to this file")
    parser.add_argument(
        "--examples", type=int, default=15, help="most common false alarms and misses listed (default 15)"
    )
    parser.add_argument(
        "--resamples", type=int, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})"
    )
    parser.add_argument("--seed", type=int, default=SEED, help=f"bootstrap seed (default {SEED})")
    parser.add_argument("--statutes", help="the statute database (default: the settings' statutes_path)")
    parser.add_argument(
        "--build-controls",
        action="store_true",
        help="build the controls into --controls from --judge-data and --data instead (lawluo/law/controls.py)",
    )
    parser.add_argument(
        "--judge-data", help="--build-controls: JuDGE's data/test.json (oneal2000/JuDGE at 2457c65)"
    )
    parser.add_argument(
        "--data", default="../shared/data", help="--build-controls: the shared data (default ../shared/data)"
    )
    parser.add_argument(
        "--force", action="store_true", help="--build-controls: replace frozen controls that differ"
    )
    parser.add_argument(
        "--held-out-from",
        metavar="DIR",
        action="append",
        help="--build-controls: build a held-out set, by the same rules, from what the controls in DIR did not use "
        "(judgments of --judge-data not in DIR, the other lawyer-llama consultations and the multi-turn ones); "
        "--build-other-laws: an earlier set whose positive rows' articles are used last (repeatable)",
    )
    parser.add_argument(
        "--build-disc-judgments",
        action="store_true",
        help="build the held-out judgment-style negative control from DISC-LawLLM's court decisions into "
        "--controls from --data instead (lawluo/law/controls_disc.py)",
    )
    parser.add_argument(
        "--build-other-laws",
        action="store_true",
        help="build the held-out set over laws other than 刑法 and 民法典 into --controls from --data instead "
        "(lawluo/law/controls_other_laws.py)",
    )
    parser.add_argument(
        "--controls-seed",
        type=int,
        help="--held-out-from: the build's seed (must differ from the earlier set's)",
    )
    parser.add_argument(
        "--judgments", type=int, default=500, help="--held-out-from: judgments drawn (default 500)"
    )


def command(args: argparse.Namespace, statutes_path: Path, command_line: str) -> tuple[int, str]:
    """Run ``bench checker``; returns (exit status, what to print). Raises :class:`ControlsError`."""
    from .checker import CitationChecker
    from .database import StatuteDB

    folder = Path(args.controls) if args.controls else DEFAULT_CONTROLS
    if (
        args.build_controls
        or getattr(args, "build_other_laws", False)
        or getattr(args, "build_disc_judgments", False)
    ):
        return 0, _build(args, Path(args.statutes or statutes_path), folder)
    rows, notes = load_controls(folder)  # before the database loads: a wrong folder fails at once
    db = StatuteDB(args.statutes or statutes_path)
    for note in notes:
        print(f"lawluo bench: {note}", file=sys.stderr)
    checker = CitationChecker(db)
    start = time.perf_counter()
    scored, unexpected, excluded = run(rows, checker)
    seconds = time.perf_counter() - start
    summary = summarise(scored, unexpected, excluded, args.resamples, args.seed)
    errors = common_errors(scored, {r["id"]: r["text"] for r in rows}, args.examples)
    meta = {
        "command": command_line,
        "checker": f"{type(checker).__module__}.{type(checker).__name__}",
        "controls": str(folder),
        "rows": len(rows),
        "as_of": takes_as_of(checker),
        "seconds": seconds,
        "resamples": args.resamples,
        "seed": args.seed,
        "notes": notes,
    }
    if args.json:
        payload = {
            "meta": meta,
            **summary,
            "common_errors": errors,
            "citations": [{**s.__dict__, "alarm": s.alarm} for s in scored],
        }
        return 0, json.dumps(payload, ensure_ascii=False, indent=1) + "\n"
    return 0, f"Made by `{command_line}`.\n\n" + markdown(summary, errors, meta)


def _build(args: argparse.Namespace, statutes: Path, folder: Path) -> str:
    from . import controls
    from .database import StatuteDB

    if getattr(args, "build_other_laws", False):
        return _build_other_laws(args, statutes, folder)
    if getattr(args, "build_disc_judgments", False):
        return _build_disc_judgments(args, statutes, folder)
    if not args.judge_data:  # the inputs are checked before the database loads
        raise ControlsError(
            "--build-controls needs --judge-data: JuDGE's data/test.json (git clone "
            f"https://github.com/{controls.JUDGE_REPO}; commit {controls.JUDGE_COMMIT[:7]})"
        )
    judge = Path(args.judge_data)
    data = Path(args.data)
    held_out = None
    needed = [judge, data / controls.LAWYER_LLAMA_FILE]
    if getattr(args, "held_out_from", None):
        if len(args.held_out_from) > 1:
            raise ControlsError("--build-controls takes one --held-out-from")
        earlier = Path(args.held_out_from[0])
        if args.controls_seed is None or args.controls_seed == controls.SEED:
            raise ControlsError(
                f"--held-out-from needs --controls-seed, other than the first set's {controls.SEED}"
            )
        if not controls.read_sums(earlier):
            raise ControlsError(f"--held-out-from {earlier}: no frozen controls (SHA256SUMS) there")
        if earlier.resolve() == folder.resolve():
            raise ControlsError("--held-out-from names the folder being built")
        held_out = controls.HeldOut(earlier, args.controls_seed, args.judgments)
        needed += [
            data / f for f in (controls.MULTI_TURN_FILE, controls.CAIL_ARTICLES_FILE, controls.ZIXUN_FILE)
        ]
    for path in needed:
        if not path.is_file():
            raise ControlsError(f"{path}: no such file")
    db = StatuteDB(statutes)
    return _write_built(folder, args.force, lambda: controls.build(db, judge, data, held_out))


def _build_other_laws(args: argparse.Namespace, statutes: Path, folder: Path) -> str:
    from . import controls, controls_other_laws
    from .database import StatuteDB

    earlier = [Path(p) for p in args.held_out_from or []]
    data = Path(args.data)
    for f in earlier:
        if not controls.read_sums(f):
            raise ControlsError(f"--held-out-from {f}: no frozen controls (SHA256SUMS) there")
        if f.resolve() == folder.resolve():
            raise ControlsError("--held-out-from names the folder being built")
    for name in (*controls_other_laws.CITING_FILES, controls_other_laws.PROSE_FILE):
        if not (data / name).is_file():
            raise ControlsError(f"{data / name}: no such file")
    db = StatuteDB(statutes)
    seed = args.controls_seed if args.controls_seed is not None else controls_other_laws.SEED
    return _write_built(
        folder, args.force, lambda: controls_other_laws.build_other_laws(db, data, earlier, seed)
    )


def _build_disc_judgments(args: argparse.Namespace, statutes: Path, folder: Path) -> str:
    from . import controls_disc
    from .database import StatuteDB

    data = Path(args.data)
    if not (data / controls_disc.DISC_FILE).is_file():
        raise ControlsError(f"{data / controls_disc.DISC_FILE}: no such file")
    db = StatuteDB(statutes)
    return _write_built(folder, args.force, lambda: controls_disc.build_disc_judgments(db, data))


def _write_built(folder: Path, force: bool, build) -> str:
    """Build the controls (``build()``: their files' rows and the statistics), write and freeze them."""
    from . import controls

    try:
        files, stats = build()
        digests = controls.write(folder, files, stats, force=force)
    except (controls.FrozenError, json.JSONDecodeError, KeyError, ValueError) as exc:
        raise ControlsError(str(exc)) from None
    return _wrote(folder, files, digests)


def _wrote(folder: Path, files: dict[str, list[dict]], digests: dict[str, str]) -> str:
    lines = [f"{d}  {n}" for n, d in sorted(digests.items())]
    sizes = {n: sum(len(r["citations"]) for r in rows) for n, rows in files.items()}
    return (
        "wrote "
        + str(folder)
        + ": "
        + ", ".join(f"{n} ({len(files[n])} rows, {sizes[n]} citations)" for n in files)
        + "\n"
        + "\n".join(lines)
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m lawluo.law.checker_bench``: the same as ``python -m lawluo bench checker``."""
    from ..config import Settings
    from ..files import write_atomically

    parser = argparse.ArgumentParser(
        prog="python -m lawluo.law.checker_bench", description=__doc__.split("\n")[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    line = "python -m lawluo.law.checker_bench " + " ".join(sys.argv[1:] if argv is None else argv)
    from .database import StatuteDBError

    try:
        status, text = command(args, Settings.load().statutes_path, line.strip())
        if args.out:
            write_atomically(args.out, text)
    except ControlsError as exc:
        print(f"lawluo bench: {exc}", file=sys.stderr)
        return 2
    except (StatuteDBError, OSError) as exc:
        print(f"lawluo bench: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
