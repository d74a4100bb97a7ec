"""Latency of the MCP tool ``check_citations`` on a 2,000-character answer, through the real MCP client.

    python benchmarks/mcp_latency.py [--calls 100] [--connections 20]

The app is served on loopback as the tests serve it (``tests/fakes/live_app.py``: ``build_app`` and
``launch_options``, no language model) with the setting ``mcp_server`` on. The answer is built from the
shipped statute database: consecutive citations of real articles (民法典, 劳动合同法, 刑法, 公司法…), each
quoting the article's text — most under the right number, one under a wrong number, one paraphrased —
joined until the next would pass 2,000 characters, then padded with a plain closing sentence to exactly
2,000. Measured, after 5 uncounted warm-up calls:

1. ``session.call_tool("check_citations", …)`` in one open ``mcp`` client session (Streamable HTTP,
   ``mcp.client.streamable_http.streamable_http_client`` + ``ClientSession``): what an agent that keeps
   its connection pays per call — JSON-RPC over HTTP, the queue gate, Gradio's MCP fast path, the check;
2. a fresh connection per call (connect, ``initialize``, call, close): what a one-shot client pays;
3. ``CitationChecker.check`` on the same text in this process: the check alone, for the overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

from _common import percentile  # also puts the repository root on sys.path

#: (law as written, article): the cited articles, in order; the last two are cited wrongly / paraphrased.
CITED = [
    ("民法典", 1079),
    ("民法典", 1087),
    ("劳动合同法", 30),
    ("劳动合同法", 82),
    ("刑法", 264),
    ("公司法", 4),
    ("民法典", 1165),
    ("劳动合同法", 47),
    ("民法典", 577),
]
CLOSING = "以上内容仅供参考，具体问题请咨询执业律师。"
LENGTH = 2000


def answer_text(db) -> tuple[str, int]:
    """The 2,000-character answer and the number of citations in it."""
    parts: list[str] = []
    for i, (law, number) in enumerate(CITED * 3):
        text = db.find_article(law, number).text.replace("\n", "")
        if i == 1:  # the content of 1087 under 1088: wrong_number
            part = f"另外，《{law}》第{number + 1}条规定：“{text}”"
        elif i == 2:  # a paraphrase, not a quote
            part = f"依据《{law}》第{number}条，用人单位应当及时足额支付劳动报酬。"
        else:
            part = f"根据《{law}》第{number}条规定：“{text}”"
        if len("".join(parts)) + len(part) > LENGTH - len(CLOSING):
            break
        parts.append(part)
    body = "".join(parts)
    filler = (CLOSING * (LENGTH // len(CLOSING) + 1))[: LENGTH - len(body)]
    return body + filler, len(parts)


async def _timed_calls(url: str, text: str, calls: int, warm: int = 5) -> list[float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    times = []
    async with streamable_http_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for i in range(warm + calls):
                start = time.perf_counter()
                result = await session.call_tool("check_citations", {"text": text})
                if result.isError:
                    raise SystemExit(f"check_citations failed: {result.content[0].text}")
                if i >= warm:
                    times.append((time.perf_counter() - start) * 1000)
    return times


async def _fresh_connections(url: str, text: str, n: int) -> list[float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    times = []
    for _ in range(n):
        start = time.perf_counter()
        async with streamable_http_client(url) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("check_citations", {"text": text})
        times.append((time.perf_counter() - start) * 1000)
    return times


def _figures(name: str, times: list[float]) -> str:
    return f"{name}: p50 {percentile(times, 50):.1f} ms, p90 {percentile(times, 90):.1f} ms (n={len(times)})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="timed calls in one session")
    parser.add_argument("--connections", type=int, default=20, help="timed calls, each on a fresh connection")
    args = parser.parse_args(argv)

    from tests.fakes.live_app import live_app

    temp = {key: tempfile.mkdtemp(prefix="lawluo-mcp-bench-") for key in ("annotation", "cache")}
    env = {"LAWLUO_ANNOTATION_DIR": temp["annotation"], "LAWLUO_CACHE_DIR": temp["cache"]}
    os.environ.update(env)  # live_app keeps these two from the environment
    with live_app(model=False, LAWLUO_MCP_SERVER="true") as app:
        checker = next(
            fn.fn.__self__.checker for fn in app.demo.fns.values() if fn.api_name == "mcp_check_citations"
        )
        text, n_cited = answer_text(checker.db)
        verdicts = [c.verdict for c in checker.check(text).citations]
        url = app.url + "gradio_api/mcp/"
        in_session = asyncio.run(_timed_calls(url, text, args.calls))
        fresh = asyncio.run(_fresh_connections(url, text, args.connections))
    local = []
    for _ in range(args.calls):
        start = time.perf_counter()
        checker.check(text)
        local.append((time.perf_counter() - start) * 1000)
    counts = {v: verdicts.count(v) for v in dict.fromkeys(verdicts)}
    print(
        f"MCP check_citations on a {len(text):,}-character answer ({n_cited} citations written; checker: {counts})"
    )
    print(
        f"server: the app on loopback ({url}), no language model; client: mcp {_mcp_version()}, same machine"
    )
    print(_figures("one session, per call_tool", in_session))
    print(_figures("fresh connection per call (connect + initialize + call)", fresh))
    print(_figures("CitationChecker.check in-process (the check alone)", local))


def _mcp_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    main()
