"""The evaluator's charts render headless to PNG files with the data they were given."""

from __future__ import annotations

from PIL import Image

from lawluo.metrics.plots import turns_chart, win_rate_chart


def test_win_rate_chart_has_one_bar_per_pair(tmp_path):
    pairs = [
        {"first": "LawLuo", "second": "GPT-4", "win": 60, "draw": 25, "loss": 15},
        {"first": "LawLuo", "second": "律师大模型", "win": 10, "draw": 0, "loss": 0},
        {"first": "LawLuo", "second": "nothing judged", "win": 0, "draw": 0, "loss": 0},
    ]
    path = win_rate_chart(pairs, tmp_path / "win.png")
    image = Image.open(path)
    assert image.format == "PNG" and image.size[0] == 960
    # Two judged pairs (the empty one is left out): height 0.5·2 + 1.5 inches at 120 dpi.
    assert image.size[1] == 300


def test_turns_chart_and_the_empty_cases(tmp_path):
    assert (
        Image.open(turns_chart({"LawLuo": [6.0, None, 8.0], "Base": [5.0]}, tmp_path / "t.png")).format
        == "PNG"
    )
    assert Image.open(turns_chart({}, tmp_path / "empty.png")).size == (840, 480)
    assert Image.open(win_rate_chart([], tmp_path / "none.png")).format == "PNG"
