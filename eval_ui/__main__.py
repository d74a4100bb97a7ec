"""``python -m eval_ui``: the annotation store from the command line (an admin's tools).

    python -m eval_ui import items.jsonl                      # or .csv; all or nothing, bad lines named
    python -m eval_ui import --answers A.jsonl --references R.jsonl --pair LawLuo:GPT4 -n 100
    python -m eval_ui add-annotator alice [--role admin]
    python -m eval_ui assign --overlap 2                      # top every item up to k annotators
    python -m eval_ui status                                  # items, annotators, progress
    python -m eval_ui export labels.csv                       # or .jsonl / .parquet; --history: every version
    python -m eval_ui export exports/                         # a folder: every file (labels, statutes, adjudications)
    python -m eval_ui build-demo --data ../shared/data        # rebuild assets/eval/demo_items.jsonl
    python -m eval_ui hash-password                           # for a users file; reads the password from stdin
    python -m eval_ui invite lawyer-li [--role admin]         # a Hugging Face account may sign in (Space)
    python -m eval_ui uninvite lawyer-li                      # … no longer; their untouched items are released
    python -m eval_ui invites                                 # every invitation
    python -m eval_ui audit --limit 50                        # the audit log, newest first

The store is ``<annotation_dir>/annotations.sqlite`` (setting ``annotation_dir``, env
``LAWLUO_ANNOTATION_DIR``; ``--config`` names a settings file). Errors go to stderr with exit status 2.
What the commands change (imports, exports, invitations, annotators added) goes to the store's audit
log as done by ``cli:<login name>``.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from datetime import UTC, datetime

from lawluo.config import ConfigError, Settings, load_settings
from lawluo.jsonl import JSONLError

from .service import STORE_FILE
from .store import AnnotationStore, StoreError


def open_store(settings: Settings) -> AnnotationStore:
    settings.annotation_dir.mkdir(parents=True, exist_ok=True)
    return AnnotationStore(
        settings.annotation_dir / STORE_FILE, reserve_idle_s=settings.annotation_reserve_idle_s
    )


def actor() -> str:
    """Who runs the command, as the audit log names them: ``cli:<login name>``."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name (a container without a passwd entry)
        return "cli"


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from .items import items_from_answers, read_items

    if args.file:
        items = read_items(args.file)
    else:
        if not (args.answers and args.references and args.pair):
            raise StoreError("give an items file, or --answers, --references and --pair SYSTEM_A:SYSTEM_B")
        system_a, sep, system_b = args.pair.partition(":")
        if not sep:
            raise StoreError(f"--pair {args.pair!r} is not SYSTEM_A:SYSTEM_B")
        items = items_from_answers(args.answers, args.references, system_a, system_b, args.n, args.seed)
    source = str(args.file or args.answers)
    with open_store(settings) as store:
        n = store.import_items(items, actor=actor(), source=source)
        _emit({"imported": n, "items": store.item_count()})
    return 0


def cmd_add_annotator(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        role = store.add_annotator(args.name, args.role, by=actor(), via="cli")
        _emit({"annotator": args.name, "role": role})
    return 0


def cmd_assign(args: argparse.Namespace, settings: Settings) -> int:
    """Top up every item to k annotators of the pool the app would use (:meth:`AnnotationService.pool`:
    the users file's annotators; on a Space the invited ones and members of the listed organisations)."""
    from .service import AnnotationService

    overlap = args.overlap or settings.annotation_overlap
    service = AnnotationService.for_settings(settings)
    with service.store as store:
        n = store.assign(overlap, settings.annotation_seed, annotators=service.pool())
        _emit({"new_assignments": n, "overlap": overlap})
    return 0


def cmd_invite(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        invitation = store.invite(args.name, args.role, by=actor())
    _emit({"invited": invitation["name"], "role": invitation["role"]})
    return 0


def cmd_uninvite(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        released = store.uninvite(args.name, by=actor())
    _emit({"uninvited": args.name, "released": released})
    return 0


def cmd_invites(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        for invitation in store.invitations():
            _emit({**invitation, "invited_at": _iso(invitation["invited_at"])})
    return 0


def cmd_audit(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        for entry in store.audit_log(args.limit):
            _emit({**entry, "at": _iso(entry["at"])})
    return 0


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat(timespec="seconds")


def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    with open_store(settings) as store:
        _emit({"items": store.item_count(), "schema_version": store.schema_version()})
        for annotator in store.annotators():
            done, assigned = store.progress(annotator["name"])
            _emit({**annotator, "done": done, "assigned": assigned})
    return 0


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from .store import EXPORT_FORMATS

    path = Path(args.path)
    fmt = path.suffix.lstrip(".").lower()
    if not path.suffix or path.is_dir():
        with open_store(settings) as store:
            paths = store.export_all(path, current_only=not args.history, actor=actor())
        _emit({"exported": [str(p) for p in paths], "folder": str(path)})
        return 0
    if fmt not in EXPORT_FORMATS:
        raise StoreError(
            f"{args.path}: 导出文件须以 .csv、.jsonl 或 .parquet 结尾，或给一个文件夹 "
            "the export path must end in .csv, .jsonl or .parquet, or be a folder"
        )
    kind = "statute_labels" if args.statutes else "labels"
    source = "adjudicated" if args.adjudicated else "raw"
    with open_store(settings) as store:
        n = store.export(path, fmt, current_only=not args.history, source=source, kind=kind, actor=actor())
    _emit({"exported": n, "path": args.path, "format": fmt, "kind": kind, "source": source})
    return 0


def cmd_build_demo(args: argparse.Namespace, settings: Settings) -> int:
    from .demo import DEMO_ITEMS, build_demo

    items = build_demo(args.data)
    _emit({"items": len(items), "path": str(DEMO_ITEMS)})
    return 0


def cmd_hash_password(args: argparse.Namespace, settings: Settings) -> int:
    from .auth import hash_password

    password = getpass.getpass("password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
    if not password:
        raise StoreError("the password is empty")
    print(hash_password(password))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval_ui", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", help="settings file (YAML; default $LAWLUO_CONFIG)")
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser(
        "import", help="import comparison items (JSONL/CSV, or two systems of an answers file)"
    )
    imp.add_argument("file", nargs="?", help="items .jsonl or .csv")
    imp.add_argument("--answers", help="an answers file of the batch evaluator")
    imp.add_argument("--references", help="its references file")
    imp.add_argument("--pair", help="SYSTEM_A:SYSTEM_B to compare")
    imp.add_argument("-n", type=int, default=100, help="questions to sample (default 100)")
    imp.add_argument("--seed", type=int, default=0)
    imp.set_defaults(func=cmd_import)
    add = sub.add_parser("add-annotator", help="register an annotator (or an admin)")
    add.add_argument("name")
    add.add_argument("--role", choices=["annotator", "admin"], default="annotator")
    add.set_defaults(func=cmd_add_annotator)
    assign = sub.add_parser("assign", help="top every item up to k annotators")
    assign.add_argument(
        "--overlap", type=int, default=None, help="k (default: the setting annotation_overlap)"
    )
    assign.set_defaults(func=cmd_assign)
    sub.add_parser("status", help="items, annotators and their progress").set_defaults(func=cmd_status)
    export = sub.add_parser(
        "export", help="write the labels as CSV, JSONL or Parquet (or every export into a folder)"
    )
    export.add_argument(
        "path", help="labels.csv, labels.jsonl or labels.parquet; a folder (no suffix): every file"
    )
    export.add_argument(
        "--history", action="store_true", help="every version of every label, not only the current"
    )
    export.add_argument(
        "--statutes", action="store_true", help="one row per labelled statute instead of per label"
    )
    export.add_argument(
        "--adjudicated",
        action="store_true",
        help="an adjudicated item's resolved label instead of its annotators' labels",
    )
    export.set_defaults(func=cmd_export)
    demo = sub.add_parser("build-demo", help="rebuild assets/eval/demo_items.jsonl from the shared data")
    demo.add_argument("--data", default="../shared/data")
    demo.set_defaults(func=cmd_build_demo)
    sub.add_parser("hash-password", help="a pbkdf2 hash for a users file").set_defaults(
        func=cmd_hash_password
    )
    invite = sub.add_parser(
        "invite", help="let a Hugging Face account sign in (on a Space) as annotator or admin"
    )
    invite.add_argument("name", help="the Hugging Face username")
    invite.add_argument("--role", choices=["annotator", "admin"], default="annotator")
    invite.set_defaults(func=cmd_invite)
    uninvite = sub.add_parser(
        "uninvite", help="withdraw an invitation (labels stay; items not labelled go to others)"
    )
    uninvite.add_argument("name")
    uninvite.set_defaults(func=cmd_uninvite)
    sub.add_parser("invites", help="every invitation").set_defaults(func=cmd_invites)
    audit = sub.add_parser("audit", help="the audit log, newest first (one JSON object a line)")
    audit.add_argument("--limit", type=int, default=100, help="rows to show (default 100)")
    audit.set_defaults(func=cmd_audit)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"eval_ui: {exc}", file=sys.stderr)
        return 2
    try:
        return args.func(args, settings)
    except (StoreError, JSONLError, ValueError, OSError) as exc:
        print(f"eval_ui {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
