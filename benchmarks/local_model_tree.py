"""The first level of the clarification tree for three everyday questions, the clarifier on the local model
of ``python -m lawluo models local`` (configs/local-cpu.yaml: Qwen2.5-Coder-0.5B, prompt_variant small):
each element with who proposed it and why not the model, and the seconds per tree. Not a CI test.

    python -m lawluo models local --detach
    python benchmarks/local_model_tree.py [--config configs/local-cpu.yaml]
"""

from __future__ import annotations

import argparse
import logging
import time

from _common import ROOT  # also puts the repository root on sys.path

from lawluo.config import load_settings
from lawluo.firm import Firm

QUESTIONS = (
    "租房到期搬走了，房东一直不退三千元押金，怎么办？",
    "我在公司干了三年，老板突然让我明天别来了，一分补偿都没提，这合法吗？",
    "楼上邻居家水管漏水，把我家天花板泡坏了，他们不肯赔。",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "local-cpu.yaml"))
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("lawluo.tolc.builder").setLevel(logging.INFO)  # the elements turned away, and why
    firm = Firm.from_settings(load_settings(parser.parse_args().config))
    for question in QUESTIONS:
        state = firm.new()
        firm.receive(state, question)
        start = time.perf_counter()
        for _ in firm.clarify(state, 2, 3):
            pass
        print(f"\n{question}  ({time.perf_counter() - start:.1f} s)")
        for node in state.tree.elements:
            why = f"/{node.fallback}" if node.fallback else ""
            print(f"   [{node.source}{why}] {node.statement}")


if __name__ == "__main__":
    main()
