"""A stand-in for llama.cpp's ``llama-server`` binary, for the tests of ``lawluo/llm/local_server.py``.

Run as a program with llama-server's own options (``-m``, ``--alias``, ``--host``, ``--port``, ``-t``, ``-c``,
``-np``, ``--jinja``, ``--lora``, ``--lora-init-without-apply``), it serves on loopback what the lifecycle needs: ``GET /health`` (503 "Loading model" for
``$FAKE_LLAMA_LOAD_S`` seconds, then 200, as llama-server does while it loads a GGUF), ``GET /v1/models`` and a
non-streamed ``POST /v1/chat/completions`` that echoes the last user message — as ``lora: …`` when the request's
``lora`` field applies the adapter (``[{"id": 0, "scale": >0}]``), and a 400 for an adapter id not loaded, as
llama-server answers. It writes its arguments as JSON to
``$FAKE_LLAMA_ARGS`` when set, exits with status 1 at once when ``$FAKE_LLAMA_FAIL`` is set or the model file is
missing, and exits 0 on SIGTERM. Standard library only, so a test can start it with any interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-m", "--model", required=True)
    parser.add_argument("--alias", default="fake")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("-t", "--threads", type=int)
    parser.add_argument("-c", "--ctx-size", type=int)
    parser.add_argument("-np", "--parallel", type=int)
    parser.add_argument("--jinja", action="store_true")
    parser.add_argument("--lora", action="append", default=[])
    parser.add_argument("--lora-init-without-apply", action="store_true")
    args = parser.parse_args(argv)
    if os.environ.get("FAKE_LLAMA_ARGS"):
        with open(os.environ["FAKE_LLAMA_ARGS"], "w", encoding="utf-8") as f:
            json.dump(vars(args), f)
    if os.environ.get("FAKE_LLAMA_FAIL") or not os.path.isfile(args.model):
        print(f"error: failed to load model '{args.model}'", file=sys.stderr)
        return 1
    if any(not os.path.isfile(path) for path in args.lora):
        print("error: failed to load lora adapter", file=sys.stderr)
        return 1
    ready_at = time.monotonic() + float(os.environ.get("FAKE_LLAMA_LOAD_S", "0.3"))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def _json(self, status: int, payload: dict) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/health":
                if time.monotonic() < ready_at:
                    self._json(
                        503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
                    )
                else:
                    self._json(200, {"status": "ok"})
            elif self.path == "/v1/models":
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": args.alias, "object": "model", "owned_by": "llamacpp"}],
                    },
                )
            else:
                self._json(404, {"error": {"code": 404, "message": "File Not Found"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path != "/v1/chat/completions":
                self._json(404, {"error": {"code": 404, "message": "File Not Found"}})
                return
            lora = body.get("lora") or []
            if any(not 0 <= a.get("id", -1) < len(args.lora) for a in lora):
                self._json(
                    400,
                    {
                        "error": {
                            "code": 400,
                            "message": "invalid adapter id",
                            "type": "invalid_request_error",
                        }
                    },
                )
                return
            applied = any(a.get("scale", 0) > 0 for a in lora) or (
                args.lora and not args.lora_init_without_apply
            )
            text = ("lora: " if applied else "echo: ") + str(body["messages"][-1]["content"])
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            self._json(200, {"object": "chat.completion", "model": args.alias, "choices": [choice]})

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(SystemExit(0)))
    try:
        server.serve_forever(0.05)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
