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
    python -m lawluo --config configs/vllm.yaml chat --role lawyer "试用期可以不交社保吗？"
    python -m lawluo consult --script consultation.json [--save state.json] [--resume state.json]

Every result is one JSON object per line on stdout (``chat`` streams plain text). Errors go to stderr
with exit status 2 (bad input or settings) or 1 (missing assets, a model that cannot be reached), and
a message that says what to do. ``--config`` (or ``$LAWLUO_CONFIG``) names the settings file.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

from .config import ROLES, ConfigError, Settings

MAX_TEXT_CHARS = 200_000


class UsageError(Exception):
    """Bad input: reported on stderr with exit status 2."""


def read_jsonl_queries(path: str) -> Iterator[tuple[str, str]]:
    """(id, text) per line of a JSONL file; a bad line stops with a message naming it."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    raw = p.read_bytes()
    if b"\x00" in raw[:8192]:
        raise UsageError(
            f"{path}: looks like a binary file; expected JSON Lines text (one JSON object per line)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{n}: not valid JSON ({exc.msg}); nothing was processed") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise UsageError(
                f'{path}:{n}: expected an object with a "text" string, e.g. {{"id": "q1", "text": "…"}}'
            )
        rows.append((str(obj.get("id", n)), obj["text"]))
    if not rows:
        raise UsageError(f"{path}: no queries in the file")
    return iter(rows)


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


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


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
        _emit({"id": qid, "query": query, "hits": hits})
    return status


def cmd_check(args: argparse.Namespace, settings: Settings) -> int:
    from .law import default_db
    from .law.checker import CitationChecker

    texts = list(_inputs(args, "text"))
    checker = CitationChecker(default_db())
    status = 0
    for tid, text in texts:
        if len(text) > MAX_TEXT_CHARS:
            _warn_cut("check", f"text {tid}", len(text), MAX_TEXT_CHARS, "checked")
            text = text[:MAX_TEXT_CHARS]
        if not text.strip():
            print(f"lawluo check: text {tid} is empty", file=sys.stderr)
            status = 2
        result = checker.check(text)
        _emit(
            {
                "id": tid,
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
    from .build_assets import build

    data = Path(args.data)
    if args.what != "index" and not data.exists():
        raise UsageError(f"{data}: no such directory (the shared data, e.g. ../shared/data)")
    summary = build(args.what, data, settings)
    _emit(summary)
    return 0


def cmd_models(args: argparse.Namespace, settings: Settings) -> int:
    import time

    from .llm import LanguageModels, LLMError, gather

    models = LanguageModels(settings.models)
    statuses = models.status()
    probes = {}
    if args.ping:

        def ping(role: str) -> tuple[float, str | None]:
            start = time.perf_counter()
            backend = models[role]
            try:
                if hasattr(backend, "score"):  # a reward model scores; it cannot chat
                    backend.score("ping", "pong")
                else:
                    backend.chat([{"role": "user", "content": "ping"}], max_tokens=1)
            except LLMError as exc:
                return time.perf_counter() - start, str(exc)
            return time.perf_counter() - start, None

        roles = [s.role for s in statuses if s.available]
        probes = dict(zip(roles, gather([lambda r=r: ping(r) for r in roles]), strict=True))
    status = 0
    for row in statuses:
        out = {"role": row.role, "backend": row.backend, "model": row.description, "available": row.available}
        if row.reason:
            out["reason"] = row.reason
        if row.role in probes:
            seconds, error = probes[row.role]
            out["ping_s"] = round(seconds, 3)
            if error:
                out["error"], status = error, 1
        _emit(out)
    return status


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
            sys.stdout.write(piece)
            sys.stdout.flush()
    except StreamInterrupted as exc:
        print(f"\nlawluo chat: {exc}", file=sys.stderr)
        return 1
    except LLMError as exc:
        print(f"lawluo chat: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write("\n")
    return 0


def cmd_consult(args: argparse.Namespace, settings: Settings) -> int:
    from .firm import Consultation, Firm
    from .firm.script import load_script, run_script, transcript

    try:
        script = load_script(args.script)
        state = None
        if args.resume:
            state = Consultation.from_json(Path(args.resume).read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    firm = Firm.from_settings(settings)
    try:
        state = run_script(firm, script, state)
    except ValueError as exc:  # a mark naming a node the tree does not have, a closed consultation
        raise UsageError(str(exc)) from None
    if args.save:
        Path(args.save).write_text(state.to_json(), encoding="utf-8")
    _emit(transcript(state))
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
    check.add_argument("--input", help='JSONL file, one {"text": …, "id": …} per line')
    check.set_defaults(func=cmd_check)

    classify = sub.add_parser("classify", help="route questions to one of the 16 consultation domains")
    classify.add_argument("question", nargs="?", help="the question, or - to read stdin")
    classify.add_argument("--input", help='JSONL file, one {"text": …, "id": …} per line')
    classify.set_defaults(func=cmd_classify)

    build = sub.add_parser("build", help="rebuild assets from the shared data")
    build.add_argument("what", choices=["statutes", "cases", "expansions", "index", "all"])
    build.add_argument("--data", default="../shared/data", help="the shared data directory")
    build.set_defaults(func=cmd_build)

    models = sub.add_parser("models", help="show the model each role uses and whether it can be used")
    models.add_argument("--ping", action="store_true", help="send a one-token request to each usable role")
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
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="lawluo: %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = Settings.load(args.config)
    except ConfigError as exc:
        print(f"lawluo: {exc}", file=sys.stderr)
        return 2
    try:
        return args.func(args, settings)
    except UsageError as exc:
        print(f"lawluo {args.command}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # missing assets, unreadable database: say what, not a traceback
        from .law.database import StatuteDBError

        if isinstance(exc, StatuteDBError | FileNotFoundError):
            print(f"lawluo {args.command}: {exc}", file=sys.stderr)
            return 1
        raise
