"""How long the secretary's report takes on a configured model, and whether it comes out whole (issue 41 item 4).

    python -m lawluo models local --detach          # the 0.5B on llama-server, as configs/local-cpu.yaml expects
    python benchmarks/secretary_local.py [--config configs/local-cpu.yaml] [--limit 6] [--out report.md]

Two sources of consultations (``--source``), each handed over as ``Firm.close`` builds it — the client's and
the lawyer's turns in order, no tree marks, and every statute the lawyer's turns cite with the citation
checker's verdict and matched article:

- ``lawyer-llama``: the first ``--limit`` multi-turn dialogues of lawyer-llama
  (``../shared/data/lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl``) with at least two client
  turns: human lawyers' short turns (median 589 characters a dialogue), all family law;
- ``local-lawbench``: the LawBench questions the local 0.5B answered and the app showed
  (``docs/results/local_model_lawbench50/answers.jsonl``), each as one question and that answer: what the
  secretary of ``configs/local-cpu.yaml`` is handed after a one-turn consultation (answers of 131–1,844
  characters), longest first with ``--longest``. Each report is written once by ``Secretary.write``
with the config's secretary model and prompt variant; the seconds are wall clock around that one call.

Prints, per consultation: seconds, the prompt's characters, whether the model's report came back (not the
partial one), the characters it wrote in the model's sections, and its warnings; then p50 / max seconds
(issue 41's target: ≤ 60 s on the 2-core machine). Temperature as configured, so a rerun can differ.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from _common import DATA, ROOT, command_line, emit_report, read_jsonl

from lawluo.agents.secretary import ReportDraft, ReportInput, Secretary, cited_statutes, load_examples
from lawluo.config import load_settings
from lawluo.domains import load_domains
from lawluo.law.checker import CitationChecker
from lawluo.law.database import StatuteDB
from lawluo.llm import LanguageModels

DIALOGUES = DATA / "lawyer_llama" / "legal_counsel_multi_turn_with_article_v2.jsonl"
LOCAL_ANSWERS = ROOT / "docs" / "results" / "local_model_lawbench50" / "answers.jsonl"
LAWBENCH = DATA / "lawbench" / "consult.dev.jsonl"
SPEAKER = {"[客户]": "client", "[律师]": "lawyer"}


def turns_of(row: dict) -> list[tuple[str, str]]:
    """A lawyer-llama dialogue's ``history`` as (role, text) turns; lines with another prefix are left out."""
    turns = []
    for line in row.get("history", []):
        prefix, _, text = line.partition(" ")
        if prefix in SPEAKER and text.strip():
            turns.append((SPEAKER[prefix], text.strip()))
    return turns


def consultations(source: str, longest: bool) -> list[tuple[str, list[tuple[str, str]]]]:
    """(domain id, turns) of every consultation of ``source``; the longest conversations first with ``longest``."""
    if source == "lawyer-llama":
        dialogues = [t for t in map(turns_of, read_jsonl(DIALOGUES)) if sum(r == "client" for r, _ in t) >= 2]
        found = [("marriage_family", turns) for turns in dialogues]
    else:
        questions = {row["id"]: row["question"] for row in read_jsonl(LAWBENCH)}
        found = [
            (row["domain"], [("client", questions[row["id"]]), ("lawyer", row["answer"])])
            for row in read_jsonl(LOCAL_ANSWERS)
            if row.get("answer")
        ]
    if longest:
        found.sort(key=lambda c: -sum(len(text) for _, text in c[1]))
    return found


def report_input(
    index: int, domain: str, turns: list[tuple[str, str]], checker: CitationChecker
) -> ReportInput:
    """The consultation as ``Firm.close`` hands it over: every statute of the lawyer's turns, once per verdict."""
    cited = cited_statutes(
        checked.as_dict()
        for role, text in turns
        if role == "lawyer"
        for checked in checker.check(text).citations
    )
    return ReportInput(
        client="咨询人",
        domain_name=domain,
        turns=turns,
        confirmed=[],
        denied=[],
        statutes=list(cited),
        matched=list(cited.values()),
        number=f"LL-BENCH-{index:03d}",
        date="2026年12月4日",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "local-cpu.yaml"))
    parser.add_argument("--source", choices=("lawyer-llama", "local-lawbench"), default="lawyer-llama")
    parser.add_argument("--longest", action="store_true", help="the longest conversations first")
    parser.add_argument("--limit", type=int, default=6, help="first N consultations (6)")
    parser.add_argument("--out", help="also write the Markdown report here")
    args = parser.parse_args()
    settings = load_settings(args.config)
    models = LanguageModels(settings.models)
    if not models.available("secretary"):
        raise SystemExit(f"{args.config}: the secretary has no usable model")
    secretary = Secretary(
        models["secretary"], load_examples(settings.report_examples_dir), settings.prompt_variant
    )
    checker = CitationChecker(StatuteDB(settings.statutes_path))
    domains = load_domains(settings.domains_file)
    rows, seconds, flagged = [], [], 0
    for index, (domain, turns) in enumerate(consultations(args.source, args.longest)[: args.limit]):
        inp = report_input(index, domains[domain].name, turns, checker)
        prompt_chars = sum(len(m["content"]) for m in secretary.messages(inp))
        start = time.perf_counter()
        report = secretary.write(inp)
        took = time.perf_counter() - start
        seconds.append(took)
        written = report.model_dump(include=set(ReportDraft.model_fields))
        chars = sum(len(v) if isinstance(v, str) else sum(map(len, v)) for v in written.values())
        whole = not report.partial
        flagged += bool(report.warnings)
        warnings = "; ".join(w[:60] for w in report.warnings) or "–"
        rows.append(
            f"| {index} | {took:.1f} | {prompt_chars} | {'yes' if whole else 'no: ' + report.notice[:40]} | "
            f"{chars} | {len(inp.statutes)} | {warnings} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    p50 = statistics.median(seconds)
    lines = [
        "# The secretary's report on a configured model (issue 41 item 4)",
        "",
        f"Made by `{command_line()}` with `{models['secretary'].describe()}` "
        f"(prompt variant `{settings.prompt_variant}`): {len(seconds)} consultations of `{args.source}`"
        f"{', the longest first' if args.longest else ''}, one report each.",
        "",
        "| consultation | seconds | prompt characters | the model's report | characters written | statutes cited | warnings |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Seconds a report: p50 **{p50:.1f}**, max {max(seconds):.1f}; "
        f"{sum(r.split('|')[4].strip() == 'yes' for r in rows)} of {len(rows)} written by the model, "
        f"{flagged} of them with a warning for a lawyer (sections copied, or advice the analysis denies).",
    ]
    emit_report("\n".join(lines), args.out)
    print(json.dumps({"p50_s": round(p50, 1), "max_s": round(max(seconds), 1), "n": len(seconds)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
