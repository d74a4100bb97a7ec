"""``lawluo search statutes|cases``: ranked statutes or cases for each query, as JSON lines."""

from __future__ import annotations

import argparse
import sys

from ..config import Settings
from .common import UsageError, emit, inputs


def add_parser(subparsers) -> None:
    """Register ``search statutes|cases QUERY``, its options and :func:`run`."""
    search = subparsers.add_parser("search", help="search statutes or cases")
    search.add_argument("target", choices=["statutes", "cases"])
    search.add_argument("query", nargs="?", help="the query text")
    search.add_argument("-k", type=int, default=5, help="number of hits per query (default 5)")
    search.add_argument("--input", help='JSONL file, one {"text": …, "id": …} per line')
    search.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """One JSON line per query: its hits (and, for statutes, what a named law or article could not give)."""
    from ..retrieval.statutes import QueryError, clean_query

    if args.k < 1 or args.k > 100:
        raise UsageError("-k must be between 1 and 100")
    queries = list(inputs(args, "query"))
    if args.target == "statutes":
        from ..retrieval.statutes import StatuteSearcher

        searcher = StatuteSearcher.from_settings(settings)
    else:
        from ..retrieval.cases import CaseSearcher

        searcher = CaseSearcher.from_settings(settings)
    status = 0
    for qid, text in queries:
        try:
            query = clean_query(text)
        except QueryError as exc:
            print(f"lawluo search: query {qid}: {exc}", file=sys.stderr)
            emit({"id": qid, "query": text, "hits": [], "error": str(exc)})
            status = 2
            continue
        hits = [h.as_dict() for h in searcher.search(query, args.k)]
        row = {"id": qid, "query": query, "hits": hits}
        if args.target == "statutes":  # a named law or article the database cannot give, and why
            row["notices"] = [x.message() for x in searcher.lookup(query) if x.message()]
        emit(row)
    return status
