"""Start-up cost of the library and of the app with no language model, each in a fresh interpreter.

    python benchmarks/import_time.py [--repeat 5]

Prints the median wall time of (a) ``import lawluo, lawluo.config, lawluo.llm``, (b) loading the
settings and creating every role's backend, and (c) ``import app; app.build_app()`` with no model
configured — and which heavy libraries each left in ``sys.modules``. Target: none of torch,
transformers, peft or openai in a no-model start (they load only when a role uses them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from _common import ROOT

HEAVY = ("torch", "transformers", "peft", "openai", "sentence_transformers", "faiss")
STAGES = {
    "import lawluo, lawluo.config, lawluo.llm": "import lawluo, lawluo.config, lawluo.llm",
    "+ settings and role backends": (
        "import lawluo.config, lawluo.llm\n"
        "lawluo.llm.LanguageModels(lawluo.config.load_settings(environ={}).models)"
    ),
    "import app; build_app() (no model)": (
        "import app\nfrom lawluo.config import load_settings\napp.build_app(load_settings(environ={}))"
    ),
}
PROBE = (
    "import json, sys, time\nt = time.perf_counter()\n{code}\n"
    "print(json.dumps([time.perf_counter() - t, [m for m in {heavy!r} if m in sys.modules]]))"
)


def run(code: str) -> tuple[float, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAWLUO_")}
    env["GRADIO_ANALYTICS_ENABLED"] = "False"
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code, heavy=HEAVY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    seconds, heavy = json.loads(out.stdout.strip().splitlines()[-1])
    return seconds, heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for label, code in STAGES.items():
        results = [run(code) for _ in range(args.repeat)]
        median = statistics.median(seconds for seconds, _ in results)
        heavy = sorted({m for _, loaded in results for m in loaded})
        print(
            f"{label:<42} median {median:6.3f} s over {args.repeat} runs; heavy modules loaded: "
            f"{', '.join(heavy) or 'none'}"
        )


if __name__ == "__main__":
    main()
