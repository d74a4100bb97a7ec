"""Back-to-back streamed calls to a served model: how many fail because the server had closed the kept-alive
connection (issue 41: "the server dropped connections three times under the judge").

    python -m lawluo models local --detach                     # or any OpenAI-compatible server
    python benchmarks/served_connections.py [--config configs/local-cpu.yaml] [--role judge] [--calls 30]

llama-server closes its connection after every streamed answer although its headers say keep-alive; a client
that pools connections sends its next request on it, and when that races the close the request is never
answered ("Server disconnected without sending a response"). The role's backend (with ``max_retries: 0``, so
nothing hides a failure) makes ``--calls`` short JSON calls one after another, first as shipped — such a
request is sent again at once on a new connection (``lawluo.llm.http.closed_unanswered``) — then with that
turned off. Printed: the calls that failed each way, and why.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
from collections import Counter
from unittest import mock

from _common import command_line  # also puts the repository root on sys.path
from pydantic import BaseModel

from lawluo.config import load_settings
from lawluo.llm import LanguageModels, LLMError
from lawluo.llm import http as llm_http


class Verdict(BaseModel):
    preference: str
    reason: str = ""


def run(model, calls: int) -> tuple[Counter, float]:
    failed: Counter[str] = Counter()
    start = time.perf_counter()
    for i in range(calls):
        messages = [
            {
                "role": "user",
                "content": f'第{i}题：回答 A 还是 B 更好？只输出 JSON：{{"preference": "A", "reason": "一句话"}}',
            }
        ]
        try:
            model.chat_json(messages, Verdict, retries=0)
        except LLMError as exc:
            failed[f"{type(exc).__name__}: {str(exc)[:60]}"] += 1
    return failed, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/local-cpu.yaml")
    parser.add_argument("--role", default="judge")
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--max-tokens", type=int, default=200)
    args = parser.parse_args()
    settings = load_settings(args.config)
    role = dict(settings.models.items())[args.role]
    options = dataclasses.replace(role.options, max_retries=0, stream=True, max_tokens=args.max_tokens)
    print(
        f"`{command_line()}`: {args.calls} calls of the {args.role} role ({options.model}), one after another"
    )
    table = dataclasses.replace(settings.models, **{args.role: dataclasses.replace(role, options=options)})
    for label, resend in (("as shipped (sent again at once)", True), ("without sending again", False)):
        model = LanguageModels(table)[args.role]  # a new backend: a new connection pool
        off = mock.patch.object(llm_http, "closed_unanswered", lambda exc: False)
        with contextlib.nullcontext() if resend else off:
            failed, seconds = run(model, args.calls)
        print(f"- {label}: {sum(failed.values())} of {args.calls} failed in {seconds:.0f} s")
        for why, n in failed.most_common():
            print(f"    {n} × {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
