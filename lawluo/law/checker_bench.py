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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .checker_bench_scoring import CONTROL_VERDICTS, Scored, Unexpected, given_verdict, score_row
from .checker_bench_stats import (
    FALSE_ALARM_TARGET,
    RECALL_TARGET,
    RESAMPLES,
    SEED,
    bootstrap_ratio,
    common_errors,
    excerpt,
    markdown,
    per_verdict,
    rate,
    summarise,
)
from .verdicts import VERDICTS

#: Scoring and statistics live in checker_bench_scoring.py and checker_bench_stats.py; their names stay
#: importable from here.
__all__ = [
    "CONTROL_VERDICTS",
    "FALSE_ALARM_TARGET",
    "RECALL_TARGET",
    "RESAMPLES",
    "SEED",
    "ControlsError",
    "Scored",
    "Unexpected",
    "add_arguments",
    "bootstrap_ratio",
    "check_text",
    "citation_key",
    "command",
    "common_errors",
    "excerpt",
    "found_citations",
    "given_verdict",
    "load_controls",
    "main",
    "markdown",
    "per_verdict",
    "rate",
    "run",
    "score_row",
    "summarise",
    "takes_as_of",
]

DEFAULT_CONTROLS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "checker_controls"
REQUIRED = {"id": str, "control": str, "style": str, "text": str, "citations": list}
CITATION_REQUIRED = {"key": str, "article": int, "suffix": int, "expect": str, "verdict": str}


if TYPE_CHECKING:
    pass


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
            "--judge-data JuDGE/data/test.json` (lawluo/law/controls/)"
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
        help="build the controls into --controls from --judge-data and --data instead (lawluo/law/controls/)",
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
        "--controls from --data instead (lawluo/law/controls/disc.py)",
    )
    parser.add_argument(
        "--build-other-laws",
        action="store_true",
        help="build the held-out set over laws other than 刑法 and 民法典 into --controls from --data instead "
        "(lawluo/law/controls/other_laws.py)",
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
    from . import controls
    from .controls import other_laws as controls_other_laws
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
    from .controls import disc as controls_disc
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
    from ..config import load_settings
    from ..files import write_atomically

    parser = argparse.ArgumentParser(
        prog="python -m lawluo.law.checker_bench", description=__doc__.split("\n")[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    line = "python -m lawluo.law.checker_bench " + " ".join(sys.argv[1:] if argv is None else argv)
    from .database import StatuteDBError

    try:
        status, text = command(args, load_settings().statutes_path, line.strip())
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
