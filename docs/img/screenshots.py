"""Retake the README's two screenshots from the running app (Debian's Chromium, headless, Playwright).

    python docs/img/screenshots.py    # docs/img/consultation.png, consultation-en.png and annotation.png

Each is what a desktop window (1366×768) shows, the navbar of the app's pages at the top. The visitors'
page, ``/``, is the app with no language model (what a fresh clone shows): a labour question, its first
two tree elements marked 是, the facts submitted, the lawyer's extract with its citations checked, the
window scrolled back to the top — in a Chinese browser, and again in an English one (docs/languages.md). The lawyers' page, ``/annotate``, is the demo store, signed in as an
annotator. Each image is reduced to 128 colours (the text stays sharp; each file ≤ 300 KB, which
tests/test_docs_links.py checks).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

QUESTION = "公司一直没和我签劳动合同，干了一年多现在把我辞退了，我能要求什么赔偿？"
VIEWPORT = {"width": 1366, "height": 768}


def save(png: bytes, path: Path, height: int | None = None) -> None:
    """Crop to ``height`` pixels from the top (None: keep) and write a 128-colour optimised PNG."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    if height:
        image = image.crop((0, 0, image.width, min(height, image.height)))
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        path, optimize=True
    )
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1000:.0f} kB, {image.width}×{image.height}")


def main() -> None:
    from playwright.sync_api import sync_playwright

    from tests.fakes.live_app import CHROMIUM, CHROMIUM_ARGS, LOGIN_BUTTON, annotation_app, live_app

    out = ROOT / "docs" / "img"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        with live_app(model=False) as app:
            for locale, name in (("zh-CN", "consultation.png"), ("en-US", "consultation-en.png")):
                page = browser.new_page(viewport=VIEWPORT, locale=locale)
                page.goto(app.url)
                page.fill("#ll-question textarea", QUESTION)
                page.click("#ll-ask")
                page.wait_for_selector('#ll-tree [data-complete="true"]', timeout=90_000)
                for _ in range(2):
                    page.locator('#ll-tree button[data-mark="yes"]:enabled').first.click()
                    time.sleep(1.5)  # the mark's round trip redraws the tree
                page.click("#ll-submit")
                page.wait_for_selector("#ll-citations .ll-badge", timeout=90_000)
                time.sleep(2)  # let the chat finish scrolling
                page.evaluate("window.scrollTo(0, 0)")
                time.sleep(0.5)
                save(page.screenshot(), out / name)
                page.close()
        with annotation_app(tempfile.mkdtemp(), "root:rootpw:admin,alice:alicepw,bob:bobpw") as app:
            page = browser.new_page(viewport=VIEWPORT, locale="zh-CN")
            page.goto(app.url.rstrip("/") + "/annotate")  # the lawyers' page
            page.fill('input[data-testid="textbox"]', "alice")
            page.fill('input[data-testid="password"]', "alicepw")
            page.click(LOGIN_BUTTON)
            page.wait_for_selector("#ann-status:has-text('0 / ')")
            time.sleep(2)
            save(page.screenshot(), out / "annotation.png")
        browser.close()


if __name__ == "__main__":
    main()
