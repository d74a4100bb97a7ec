"""The report a visitor downloads links nowhere: an address a model (or the client) wrote in it is text — in
the .md, in any Markdown viewer, as on the page (:func:`~lawluo.agents.secretary.inert_links`), and in the
.docx, which holds no hyperlink at all. Link syntax is checked with a CommonMark renderer; the bare-address
autolinks of GitHub-flavoured viewers by the characters they start with."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from lawluo.agents.secretary import CitedStatute, Report, inert_links, render_docx, render_markdown
from lawluo.ui import consult_tab as tab

from .test_consult_restore import make_firm

LEAK = "http://127.0.0.1:8765/leak"
HOSTILE = (
    f"见[点这里]({LEAK}/inline)、[参考][r]、<{LEAK}/auto>、{LEAK}/bare、www.example.com/www，"
    f"联系 someone@example.com\n\n[r]: {LEAK}/ref"
)
#: What autolinks start with (GitHub-flavoured Markdown, most viewers), unless escaped.
AUTOLINK = re.compile(r"(?i)(https?|ftp|mailto):|www\.|(?<!\\)@")


def hostile_report() -> Report:
    """Every text a model or the client writes holds links of every kind."""
    return Report(
        number="LL-1",
        date="2024年06月01日",
        client=f"张先生 someone@example.com {LEAK}/client",
        subject=HOSTILE,
        purpose=HOSTILE,
        facts=HOSTILE,
        analysis=HOSTILE,
        advice=[HOSTILE],
        risks=[HOSTILE],
        generated_by="scripted",
        confirmed=[HOSTILE],
        denied=[HOSTILE],
        statutes=[
            CitedStatute(citation="《中华人民共和国劳动合同法》第八十二条", verdict="verified", text=HOSTILE)
        ],
    )


def rendered(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def hyperlinks(docx: Path) -> list[str]:
    """Every way a Word document holds a link: ``w:hyperlink`` elements, ``HYPERLINK`` fields, hyperlink
    relationships."""
    with zipfile.ZipFile(docx) as z:
        xml = "".join(
            z.read(name).decode("utf-8") for name in z.namelist() if name.endswith((".xml", ".rels"))
        )
    return re.findall(r"<w:hyperlink\b|HYPERLINK|relationships/hyperlink", xml)


def docx_text(docx: Path) -> str:
    from docx import Document

    return "\n".join(p.text for p in Document(str(docx)).paragraphs)


def test_the_markdown_report_holds_no_link_and_shows_every_address():
    markdown = render_markdown(hostile_report())
    html = rendered(markdown)
    assert "<a " not in html and "<img" not in html
    assert not AUTOLINK.search(markdown)
    for address in ("/leak/inline", "/leak/auto", "/leak/bare", "/leak/ref", "/leak/client"):
        assert f"127.0.0.1:8765{address}" in html  # shown as text
    assert f"{LEAK}/bare" in html and "someone@example.com" in html and "www.example.com/www" in html
    assert inert_links(markdown) == markdown  # the page's report is the downloaded one


def test_the_word_report_holds_no_hyperlink_and_the_addresses_as_written(tmp_path):
    docx = render_docx(hostile_report(), tmp_path / "report.docx")
    assert hyperlinks(docx) == []
    text = docx_text(docx)
    assert f"{LEAK}/bare" in text and "someone@example.com" in text and f"[点这里]({LEAK}/inline)" in text


@pytest.fixture(scope="module")
def firm(firm_services):
    return make_firm(firm_services)


def test_the_files_a_visitor_downloads_link_nowhere(firm):
    """End a consultation (no model: the report quotes the client's words) and read its two files."""
    question = f"公司一直没和我签劳动合同，老板让我看 [这个]({LEAK}/question) 和 {LEAK}/bare，怎么办？"
    state = list(tab.ask(firm, None, question, True, 2, 2))[-1].state
    ended = tab.end(firm, state, client=f"张先生 {LEAK}/name someone@example.com")
    md = Path(ended.download_md["value"]).read_text(encoding="utf-8")
    # what the page shows is what the file holds (the page marks the report's number as a code of no language)
    assert re.sub(r'<span lang="zxx">([^<]*)</span>', r"\1", ended.report) == md and "lang=" not in md
    assert "<a " not in rendered(md) and not AUTOLINK.search(md)
    assert f"{LEAK}/question" in rendered(md) and f"{LEAK}/name" in rendered(md)
    docx = Path(ended.download_docx["value"])
    assert hyperlinks(docx) == [] and f"{LEAK}/question" in docx_text(docx)
