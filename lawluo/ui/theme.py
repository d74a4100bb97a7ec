"""The app's Gradio theme: Gradio's default look with colours that meet WCAG 2.1 AA (issue 42).

Gradio's default orange (``#f97316``) carries white button text at 2.8:1 and the selected tab's label at 2.8:1
against white; the red of a ``stop`` button 3.8:1. AA asks 4.5:1 for text. The same hues one or two steps
darker (Tailwind's orange-700 ``#c2410c``: 5.2:1, red-700 ``#b91c1c``: 6.5:1) keep the look and pass;
``tests/test_accessibility_browser.py`` checks the pages with axe-core.
"""

from __future__ import annotations

import gradio as gr

PRIMARY, PRIMARY_HOVER = "#c2410c", "#9a3412"  # orange-700 / -800 (white text 5.2:1, 7.3:1)
STOP, STOP_HOVER = "#b91c1c", "#991b1b"  # red-700 / -800 (white text 6.5:1, 8.3:1)
FOCUS = "#1d4ed8"  # blue-700: the focus ring


#: Page-wide rules (``app.CSS``): touch targets of at least 44 × 44 px (WCAG 2.1 2.5.5) for the tabs, the buttons
#: and the folds' headers, and a focus ring that shows where the keyboard is.
PAGE_CSS = f"""
button[role="tab"], button.lg, button.md, .label-wrap {{ min-height: 44px; }}
.label-wrap {{ display: flex; align-items: center; }}
:focus-visible {{ outline: 3px solid {FOCUS} !important; outline-offset: 2px; }}
footer, footer a, footer button {{ color: #52525b !important; }}
footer a, footer button {{ min-height: 44px; display: inline-flex; align-items: center; }}
button.icon-button, .overflow-menu > button {{ min-width: 44px; min-height: 44px; }}
"""


def build_theme() -> gr.themes.Base:
    """Gradio's default theme with the colours above for primary and stop buttons, the accent (the
    selected tab, links, checkboxes) and a visible focus ring."""
    return gr.themes.Default(primary_hue="orange").set(
        color_accent=PRIMARY,
        color_accent_soft="*primary_50",
        button_primary_background_fill=PRIMARY,
        button_primary_background_fill_hover=PRIMARY_HOVER,
        button_primary_border_color=PRIMARY,
        button_primary_text_color="#ffffff",
        button_cancel_background_fill=STOP,
        button_cancel_background_fill_hover=STOP_HOVER,
        button_cancel_border_color=STOP,
        button_cancel_text_color="#ffffff",
        input_border_color_focus=FOCUS,
        block_info_text_color="*neutral_600",  # a field's hint (#52525b: 7.7:1; Gradio's is lighter)
        input_placeholder_color="*neutral_600",  # a placeholder, an empty menu's text (Gradio's: 1.9:1)
        body_text_color_subdued="*neutral_600",
    )
