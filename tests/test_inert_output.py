"""What a model or a client writes reaches the page as text, never as a link, an image or markup; error
messages name no server path; a long citation check is shown a page of cards at a time.

Link syntax is checked here with a CommonMark renderer; the bare-URL autolinks of Gradio's own
(GitHub-flavoured) renderer, and the requests a browser would make, are checked in Chromium by
``test_consult_visitor_browser.py``.
"""

from __future__ import annotations

import re

import gradio as gr
import pytest
from markdown_it import MarkdownIt

from lawluo.ui import render
from lawluo.ui.statute_tab import MAX_TEXT_CHARS, more_citations

pytestmark = pytest.mark.slow  # 5 s of the suite on 2 cores (4 s or more: left out of the inner loop)

LEAK = "http://127.0.0.1:8765/leak"
LINKS = {
    "inline": f"[点这里]({LEAK}/inline)",
    "with title": f'[x]({LEAK} "t")',
    "reference": f"[x][r]\n\n[r]: {LEAK}/ref",
    "collapsed reference": f"[r][]\n\n[r]: {LEAK}",
    "shortcut reference": f"[r]\n\n[r]: {LEAK}",
    "angle autolink": f"<{LEAK}/auto>",
    "image in a link": f"[![x]({LEAK}/img)]({LEAK}/a)",
    "escaped backslash before": f"\\\\[x]({LEAK})",
}


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("text", LINKS.values(), ids=LINKS.keys())
def test_no_link_forms_in_untrusted_text(text):
    html = rendered(render.inert_md(text))
    assert "<a " not in html and "<img" not in html
    assert "127.0.0.1:8765/leak" in html  # the address still shows, as text


def test_bare_addresses_get_no_autolink_trigger_and_read_the_same():
    text = f"见 {LEAK}/bare、HTTPS://A.EXAMPLE、www.example.com 或 someone@example.com"
    inert = render.inert_md(text)
    assert not re.search(r"(?i)(https?|ftp|mailto):|www\.|(?<!\\)@", inert)  # what autolinks start with
    assert rendered(inert) == f"<p>{text}</p>\n"  # …and the reader sees exactly what was written
    assert render.inert_links(inert) == inert  # applying it twice changes nothing


def test_error_messages_lose_their_paths_and_keep_the_rest():
    assert render.without_paths("cannot open C:\\Users\\me\\x.json or /srv/app/tmp/a b") == (
        "cannot open …/x.json or …/a b"
    )
    kept = "NHSR 1/2, 第1/2条, http://host/a/b and ratio 3/4/5"
    assert render.without_paths(kept) == kept  # a ratio, an article, a URL: not a server's file
    long = render.error_text(ValueError("x" * 1000), limit=50)
    assert long.startswith("ValueError: xxx") and long.endswith("…") and len(long) == 50


def citations(n: int) -> list[dict]:
    return [{"law": "中华人民共和国民法典", "article_label": "第一千零七十九条", "verdict": "verified"}] * n


def test_a_long_check_shows_a_page_of_cards_and_a_button_for_the_next():
    first = render.citation_list(citations(120), "", render.CITATION_PAGE)
    assert first.count('class="ll-card"') == 50 and 'data-more="100"' in first
    assert "已显示 50 / 120 条引用" in first and "再显示 50 条" in first
    second = render.citation_list(citations(120), "", 100)
    assert second.count('class="ll-card"') == 100 and 'data-more="120"' in second and "再显示 20 条" in second
    last = render.citation_list(citations(120), "", 120)
    assert last.count('class="ll-card"') == 120 and "data-more" not in last
    assert render.citation_list(citations(3), "").count('class="ll-card"') == 3  # no limit asked: all


def Clicked(more) -> gr.EventData:  # noqa: N802 (reads as the event it makes)
    """The ``gr.EventData`` of a click on the "more" button (its ``data-more``)."""
    return gr.EventData(None, {"more": more})


@pytest.mark.parametrize(("more", "cards"), [("100", 100), ("9999", 120), ("x", 50), (None, 50), ("-5", 50)])
def test_more_shows_the_cards_asked_for_within_what_there_is(checker, more, cards):
    text = "《中华人民共和国民法典》第一千零七十九条规定离婚。" * 120
    html = more_citations(checker, text, Clicked(more))
    assert html.count('class="ll-card"') == cards


def test_more_on_an_empty_or_overlong_text(checker):
    assert more_citations(checker, "", Clicked("100")) == ""
    html = more_citations(checker, "《民法典》第1079条。" * (MAX_TEXT_CHARS // 5), Clicked("60"))
    assert html.count('class="ll-card"') == 60
