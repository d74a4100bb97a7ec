"""The statistics and the report of ``bench checker``: false-alarm rate, recall and per-verdict precision and
recall with percentile bootstrap intervals over rows (Efron & Tibshirani 1993, §13.3); the Markdown report."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from .checker_bench_scoring import CONTROL_VERDICTS, Scored, Unexpected
from .verdicts import HALLUCINATED, VERDICTS

if TYPE_CHECKING:
    import numpy as np

FALSE_ALARM_TARGET = 0.02
RECALL_TARGET = 0.95
RESAMPLES = 2000
SEED = 0


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
