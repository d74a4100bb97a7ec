"""What the fake servers on loopback share: stopping them, whatever their requests are doing.

A fake (``FakeOpenAIServer``, ``FakeAnthropicServer``) serves from a thread (``_httpd``, ``_thread``),
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
