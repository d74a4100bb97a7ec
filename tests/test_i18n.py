"""The catalogue of the pages' texts, and how a text reaches a visitor in one language.

Every text a visitor or an annotator reads is a key with a Chinese and an English text
(``lawluo/strings/*.yaml``); fixed texts are Gradio ``I18n`` keys, texts built at run time carry both
languages in ``<span lang>`` elements of which the page's CSS shows one; the language is settled before
Gradio's bundle runs by a script the headers middleware puts first in each page's ``<head>``.
"""

from __future__ import annotations

import re

import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from lawluo.i18n import EN, ZH, CatalogueError, Message, catalogue, load_catalogue, message, text
from lawluo.ui.headers import SecurityHeadersMiddleware, inline_script_hashes
from lawluo.ui.i18n import LANG_CSS, LOCALE_HEAD, LOCALES, Html, say, say_block, t, translations

from .i18n_checks import NAMES, WORD

CJK = re.compile(r"[\u3400-\u9fff]")


def write(folder, name: str, body: str):
    (folder / name).write_text(body, encoding="utf-8")


# -- the catalogue ------------------------------------------------------------------------------------


def outside_marked(text_: str) -> str:
    """``text_`` without its elements that declare their own language, its code, and its ``{fields}``."""
    text_ = re.sub(r"<(\w+)[^>]*\blang=[^>]*>.*?</\1>|<code>.*?</code>|`[^`]*`", "", text_, flags=re.S)
    return re.sub(r"<[^>]+>|\{[^}]*\}|https?://\S+", "", text_)


def test_every_shipped_key_is_in_one_language_each_side():
    table = catalogue()
    assert len(table) > 500
    names = NAMES | {"Bradley", "Terry", "UTF", "json", "Space", "README"}
    for key, texts in table.items():
        english = [w for w in WORD.findall(outside_marked(texts[ZH])) if w not in names]
        assert len(english) < 2, f"{key}: its Chinese text has English words {english}: {texts[ZH]!r}"
        assert not CJK.search(outside_marked(texts[EN])), (
            f"{key}: its English text has Chinese: {texts[EN]!r}"
        )


def test_a_key_without_both_languages_is_refused(tmp_path):
    write(tmp_path, "a.yaml", "a.one:\n  zh: 一\n")
    with pytest.raises(CatalogueError, match="a.one"):
        load_catalogue(tmp_path)


def test_an_empty_text_is_refused(tmp_path):
    write(tmp_path, "a.yaml", "a.one:\n  zh: 一\n  en: ' '\n")
    with pytest.raises(CatalogueError, match="non-empty"):
        load_catalogue(tmp_path)


def test_a_key_given_twice_in_one_file_or_in_two_is_refused(tmp_path):
    write(tmp_path, "a.yaml", "a.one:\n  zh: 一\n  en: one\na.one:\n  zh: 壹\n  en: One\n")
    with pytest.raises(CatalogueError, match="twice"):
        load_catalogue(tmp_path)
    write(tmp_path, "a.yaml", "a.one:\n  zh: 一\n  en: one\n")
    write(tmp_path, "b.yaml", "a.one:\n  zh: 壹\n  en: One\n")
    with pytest.raises(CatalogueError, match="already in a.yaml"):
        load_catalogue(tmp_path)


def test_fields_must_be_the_same_in_both_languages(tmp_path):
    write(tmp_path, "a.yaml", "a.n:\n  zh: '{n} 条'\n  en: '{count} articles'\n")
    with pytest.raises(CatalogueError, match="fields"):
        load_catalogue(tmp_path)


def test_a_message_is_a_key_and_fields_rendered_in_either_language():
    msg = message("nav.home")
    assert (
        msg == Message("nav.home", {})
        and str(msg) == text("nav.home", ZH)
        and msg.text(EN) == text("nav.home", EN)
    )
    with pytest.raises(KeyError):
        message("no.such.key")


# -- texts built at run time --------------------------------------------------------------------------


def test_say_gives_both_languages_each_in_its_own_lang_element():
    html = say("nav.home")
    assert html == (
        f'<span class="ll-lang-zh" lang="zh-CN">{text("nav.home", ZH)}</span>'
        f'<span class="ll-lang-en" lang="en">{text("nav.home", EN)}</span>'
    )
    assert ".ll-lang-zh" in LANG_CSS and ".ll-lang-en" in LANG_CSS


def test_say_escapes_its_fields_unless_they_are_html():
    hostile = "<img src=x onerror=alert(1)>"
    shown = say("store.no_invitation", name=hostile)
    assert "<img" not in shown and shown.count("&lt;img src=x onerror=alert(1)&gt;") == 2
    assert say("store.no_invitation", name=Html("<b>x</b>")).count("<b>x</b>") == 2
    block = say_block("store.no_item", item="**q1**")
    assert (
        f'<div class="ll-lang-en" lang="en">\n\n{text("store.no_item", EN, item="**q1**")}\n\n</div>' in block
    )


def test_a_fixed_text_is_a_gradio_key_and_an_unknown_one_fails_when_the_page_is_built():
    assert str(t("nav.home")).startswith("__i18n__")
    assert translations().translations_dict[LOCALES[EN]]["nav.home"] == text("nav.home", EN)
    with pytest.raises(KeyError):
        t("no.such.key")


# -- the language, settled before Gradio reads it -----------------------------------------------------


def page_app(head: str) -> Starlette:
    page = "<!doctype html><html lang='en'><head><script>window.x=1</script></head><body>page</body></html>"
    app = Starlette(routes=[Route("/", lambda request: HTMLResponse(page))])
    app.add_middleware(SecurityHeadersMiddleware, pages=("/",), head=head)
    return app


def test_the_language_script_goes_first_in_the_pages_head_and_is_allowed_by_its_policy():
    response = TestClient(page_app(LOCALE_HEAD)).get("/")
    body = response.content
    assert body.index(LOCALE_HEAD.encode()) == body.index(b"<head>") + len(b"<head>")
    assert int(response.headers["content-length"]) == len(body)
    policy = response.headers["content-security-policy"]
    assert all(f"'sha256-{h}'" in policy for h in inline_script_hashes(body))
    assert len(inline_script_hashes(body)) == 2  # the language script and the page's own


def test_without_a_head_the_page_is_unchanged():
    response = TestClient(page_app("")).get("/")
    assert b"navigator" not in response.content and response.text.endswith("</html>")
