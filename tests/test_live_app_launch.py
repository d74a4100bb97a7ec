"""The browser tests' app launcher starts again when Gradio's probe of its own fresh server times out (a loaded
machine), and gives up on any other error at once."""

from __future__ import annotations

import pytest

from tests.fakes import live_app

PROBE = ValueError(
    "When localhost is not accessible, a shareable link must be created. Please set share=True"
)


class Demo:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.ports: list[int] = []
        self.closed = 0

    def launch(self, server_port: int, **kwargs):
        self.ports.append(server_port)
        if self.failures:
            raise self.failures.pop(0)
        return None, f"http://127.0.0.1:{server_port}/", None

    def close(self) -> None:
        self.closed += 1


def test_a_timed_out_probe_is_started_again_on_another_port():
    demo = Demo([PROBE, PROBE])
    url = live_app._launch(demo, {})
    assert url == f"http://127.0.0.1:{demo.ports[-1]}/" and len(demo.ports) == 3 and demo.closed == 2


def test_the_probe_failing_every_time_or_another_error_is_raised():
    with pytest.raises(ValueError, match="localhost is not accessible"):
        live_app._launch(Demo([PROBE] * live_app.LAUNCH_TRIES), {})
    other = Demo([ValueError("`allowed_paths` must be a list of directories.")])
    with pytest.raises(ValueError, match="allowed_paths"):
        live_app._launch(other, {})
    assert len(other.ports) == 1
