"""What every searcher does first with a query: :func:`clean_query`, or :class:`QueryError` saying why not.

    clean_query("  试用期 解除劳动合同 ")    # "试用期 解除劳动合同"
    clean_query("")                          # QueryError: 请输入问题或关键词，例如：… · Type a question …

The bottom of :mod:`lawluo.retrieval`: the statute, case and vote searchers import it, it imports none of them.
"""

from __future__ import annotations

from ..i18n import EN, ZH, Message, message

MAX_QUERY_CHARS = 2000


def bilingual(msg: Message) -> str:
    """``msg`` in Chinese, then in English (`` · ``): what the command line and the logs print where they
    printed both before."""
    return f"{msg.text(ZH)} · {msg.text(EN)}"


class QueryError(ValueError):
    """A query that cannot be searched; the message says why and what to do. Made from a
    :class:`~lawluo.i18n.Message`, it keeps it as ``.message`` (the web app shows it in the page's
    language) and ``str(exc)`` is its Chinese then its English text; made from a string, ``.message`` is None."""

    def __init__(self, reason: str | Message) -> None:
        self.message = reason if isinstance(reason, Message) else None
        super().__init__(bilingual(reason) if isinstance(reason, Message) else reason)


def clean_query(query: object) -> str:
    """``query`` stripped and cut to :data:`MAX_QUERY_CHARS` characters; :class:`QueryError` when it is
    not text or is empty."""
    if not isinstance(query, str):
        raise QueryError(message("statute.query_not_text"))
    query = query.strip()
    if not query:
        raise QueryError(message("statute.query_empty", example="试用期 解除劳动合同"))
    return query[:MAX_QUERY_CHARS]
