"""A tab's view: one dataclass whose fields are named after the tab's components.

A handler returns (or yields) a view and never a positional tuple; :meth:`View.outputs` is the one
place a view becomes an event's outputs, in the order of the field names the event declares. A field
left at :data:`KEEP` leaves its component as it is (``gr.skip()``), so a refusal that only has a message
to show sets that one field. A new component of a tab is one new field::

    @dataclass
    class MyView(View):
        chat: list | Keep = KEEP
        message: str | Keep = KEEP

    ASKED = ("chat", "message")                                   # an event's outputs, by name
    button.click(on_ask, inputs, [components[n] for n in ASKED])  # …and on_ask returns view.outputs(ASKED)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import gradio as gr


class Keep:
    """The type of :data:`KEEP`: "leave this component as it is"."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = Keep()


@dataclass
class View:
    """Base of a tab's view (subclass it with one field per component, each defaulting to :data:`KEEP`)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every field, in order: the outputs of an event that fills the whole view."""
        return tuple(f.name for f in fields(cls))

    def outputs(self, names: Sequence[str] | None = None) -> tuple:
        """The values of ``names`` (default: :meth:`names`) in that order; a :data:`KEEP` becomes ``gr.skip()``.

        An unknown name raises ``KeyError``: an event cannot ask for a component the view lacks.
        """
        known = self.names()
        names = known if names is None else tuple(names)
        unknown = [name for name in names if name not in known]
        if unknown:
            raise KeyError(f"{type(self).__name__} has no field {', '.join(unknown)}")
        return tuple(gr.skip() if (value := getattr(self, name)) is KEEP else value for name in names)


def date_box(label, info, elem_id: str, placeholder="YYYY-MM-DD") -> gr.Textbox:
    """A one-line ``YYYY-MM-DD`` field: the day citations are judged as of (the statute tab's date the text was
    written, the consultation's date of the facts); empty means today's law. ``label``, ``info`` and
    ``placeholder`` may be texts or ``gr.I18n`` keys (:func:`lawluo.ui.i18n.t`)."""
    return gr.Textbox(
        label=label, info=info, placeholder=placeholder, max_lines=1, max_length=20, elem_id=elem_id
    )


def event_field(evt: gr.EventData | None, name: str) -> object | None:
    """Field ``name`` of the data a custom event sends (``data-node`` of a tree button: ``evt.node``, Gradio's
    public attribute access), or ``None`` when the event has no such field or no data at all (an API call
    sends none, and Gradio's ``EventData`` then raises ``TypeError`` rather than ``AttributeError``).

    >>> event_field(gr.EventData(None, {"node": "1.2"}), "node"), event_field(gr.EventData(None, None), "node")
    ('1.2', None)
    """
    try:
        return getattr(evt, name)
    except (AttributeError, TypeError):
        return None
