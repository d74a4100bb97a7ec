"""How the tabs' plain handlers meet Gradio: the service bound first (:func:`bind`), a form's components
read as one named form (:func:`bind_form`), and a handler's named reply mapped to its components
(:func:`components_for`)."""

# no `from __future__ import annotations`: Gradio reads the handlers' gr.Request / gr.OAuthProfile hints at runtime

import inspect
from collections.abc import Callable, Sequence
from functools import partial, wraps
from typing import Any, NamedTuple, get_type_hints

import gradio as gr

from lawluo.ui.views import View

from .. import label_form


def bind(fn: Callable[..., Any], *bound: Any) -> Callable[..., Any]:
    """``fn`` with its first arguments fixed to ``bound`` (the service…), keeping the hints Gradio reads;
    a :class:`~lawluo.ui.views.View` it returns becomes the event's outputs (every field, in order).

    ``functools.partial`` would hide them: Gradio looks for ``gr.Request`` / ``gr.OAuthProfile`` hints
    with ``typing.get_type_hints``, which finds none on a partial object, and would then count the
    request as one of the event's inputs.
    """
    hints = get_type_hints(fn)
    for name in list(inspect.signature(fn).parameters)[: len(bound)]:
        hints.pop(name, None)

    @wraps(fn)
    def handler(*args: Any, **kwargs: Any) -> Any:
        result = fn(*bound, *args, **kwargs)
        return result.outputs() if isinstance(result, View) else result

    handler.__signature__ = inspect.signature(partial(fn, *bound))  # type: ignore[attr-defined]
    handler.__annotations__ = hints
    del handler.__wrapped__  # inspect.signature would follow it back to fn's own parameters
    return handler


def bind_form(
    fn: Callable[..., Any], read_form: Callable[..., Any], sides: Sequence[str], *bound: Any
) -> Callable[..., Any]:
    """``fn(*bound, form, request, profile)`` as Gradio calls it: the request and the profile (filled in by
    their hints, so first), then the form's components in order, made one form by ``read_form`` (a form's
    ``from_inputs``, whose parameters are the event's inputs); the HTTP API names each statute slot
    ``{side}_{n}`` (:func:`label_form.named_slots`). A view ``fn`` returns becomes the event's outputs.
    """

    @wraps(fn)
    def handler(request: gr.Request, profile: gr.OAuthProfile | None = None, *values: Any) -> Any:
        result = fn(*bound, read_form(*values), request, profile)
        return result.outputs() if isinstance(result, View) else result

    own = list(inspect.signature(handler, follow_wrapped=False).parameters.values())[:2]
    form = list(inspect.signature(read_form).parameters.values())
    handler.__signature__ = inspect.Signature(own + form)  # type: ignore[attr-defined]
    handler.__annotations__ = {"request": gr.Request, "profile": gr.OAuthProfile | None}
    del handler.__wrapped__  # inspect.signature would follow it back to fn's own parameters
    return label_form.named_slots(handler, sides)


def components_for(reply: type[NamedTuple], **components: Any) -> list:
    """The components a handler's named reply (a ``NamedTuple``) goes to, in the order of its fields:
    ``components_for(ExportReply, message=box, file=download)``; a field without a component raises
    ``KeyError``."""
    return [components[name] for name in reply._fields]
