"""Shared helpers of the benchmark scripts: paths and the shared data location."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))


#: Lay questions of different domains, for the app benchmarks.
QUESTIONS = [
    "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？",
    "邻居家的狗把我孩子咬伤了，医药费该谁出？",
    "朋友借了我五万块钱一直不还，我该怎么起诉？",
    "租房合同到期了，房子也没有损坏，房东却不退押金，我该怎么办？",
    "网购买到假货，商家拒绝退款，我能要求三倍赔偿吗？",
]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    idx = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[idx]


def command_line() -> str:
    """How this benchmark was run, for its report: ``python benchmarks/<script> <arguments>`` (shell-quoted)."""
    import shlex

    script = Path(sys.argv[0]).name
    return "python benchmarks/" + " ".join(shlex.quote(a) for a in [script, *sys.argv[1:]])


def emit_report(text: str, out: str | None) -> None:
    """Print a Markdown report and, with ``--out``, also write it there (atomically, newline-terminated)."""
    print(text)
    if out:
        from lawluo.files import write_atomically

        write_atomically(out, text if text.endswith("\n") else text + "\n")


def wait_for(url: str, seconds: float, proc: subprocess.Popen | None = None) -> float:
    """Seconds until ``url`` answers 200 (RuntimeError past ``seconds`` or when ``proc`` exits)."""
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the process serving {url} exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return time.perf_counter() - start
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {seconds:g} s")
