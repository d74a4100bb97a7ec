"""What the fake servers on loopback share: stopping them, whatever their requests are doing.

A fake (``FakeOpenAIServer``, ``FakeAnthropicServer``) serves from a thread (:meth:`LoopbackServer._serve`),
keeps its open connections in ``_connections`` under ``_lock`` and says it is closing with ``_closing``,
which wakes a request sleeping in a hang or a slow stream.
"""

from __future__ import annotations

import socket
import threading
from http.server import ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    _lock: threading.Lock
    _closing: threading.Event
    _connections: set[socket.socket]
    _httpd: ThreadingHTTPServer
    _thread: threading.Thread

    def _serve(self, httpd: ThreadingHTTPServer) -> None:
        """Start serving ``httpd`` (made with this fake as its owner) from a daemon thread."""
        self._closing = threading.Event()
        self._connections = set()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving and drop open connections; wakes any request sleeping in a hang or latency."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=1.0)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
