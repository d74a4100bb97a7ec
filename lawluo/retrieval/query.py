"""What every searcher does first with a query: :func:`clean_query`, or :class:`QueryError` saying why not.

    clean_query("  试用期 解除劳动合同 ")    # "试用期 解除劳动合同"
    clean_query("")                          # QueryError: 请输入问题或关键词 empty query: …

The bottom of :mod:`lawluo.retrieval`: the statute, case and vote searchers import it, it imports none of them.
"""

from __future__ import annotations

MAX_QUERY_CHARS = 2000


class QueryError(ValueError):
    """A query that cannot be searched; the message says why and what to do."""


def clean_query(query: object) -> str:
    """``query`` stripped and cut to :data:`MAX_QUERY_CHARS` characters; :class:`QueryError` when it is
    not text or is empty."""
    if not isinstance(query, str):
        raise QueryError("请输入文字 the query must be text")
    query = query.strip()
    if not query:
        raise QueryError(
            "请输入问题或关键词 empty query: type a question or a few words, e.g. 试用期 解除劳动合同"
        )
    return query[:MAX_QUERY_CHARS]
