"""Running ``python -m eval_ui`` (the annotation admin commands) inside a test."""

from __future__ import annotations

import json

from eval_ui.__main__ import main


def run(capsys, *argv):
    """Exit code, the JSON lines printed on stdout, and stderr of ``python -m eval_ui *argv``."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err
