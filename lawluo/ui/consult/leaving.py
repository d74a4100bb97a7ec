"""A visitor's page gone: its model step is stopped at once, its consultation and files freed once it has
not come back within the grace period."""

from __future__ import annotations

import logging
import threading

import gradio as gr

from ..visitors import (
    Visitors,
    give_back_memory,
)
from .page import PAGE_LEFT

logger = logging.getLogger("lawluo.ui.consult_tab")


def leave_later(visitors: Visitors, request: gr.Request) -> None:
    """Stop the departed session's model step at once; free its consultation and files ``session_grace_s``
    after its page disconnected.

    A page whose connection only dropped (a phone put away, a network blip) reconnects its heartbeat
    with the same session: if it has by then (:class:`~lawluo.ui.visitors.Presence`), or a step of it is
    still running, nothing is freed and the check is made again later. Its running step is stopped all the
    same (what was streamed is kept, with the firm's note): nobody is sure to be waiting for it.
    """
    session = getattr(request, "session_hash", None)
    if session:
        visitors.cancel(session, PAGE_LEFT)
    app = getattr(getattr(request, "request", None), "app", None)
    if not session or app is None:
        return
    presence = getattr(getattr(app, "state", None), "lawluo_presence", None)

    def check() -> None:
        if presence is not None and presence.is_open(session):
            return  # the page is back: Gradio calls unload again when it leaves
        if visitors.busy(session):  # a step of the departed page still runs: look again later
            later(check)
            return
        visitors.forget(session)
        free_session_state(getattr(app, "state_holder", None), session)
        give_back_memory()

    def later(fn) -> None:
        timer = threading.Timer(max(visitors.limits.session_grace_s, 1.0), fn)
        timer.daemon = True
        timer.start()

    later(check)


def free_session_state(holder, session: str) -> None:
    """Drop a departed session's ``gr.State`` values and its copies of the components' configuration.

    Gradio keeps a closed page's state for an hour, and the session's configuration copies until 10,000
    newer sessions push them out; a consultation cannot be reopened once its page is gone for good (a new
    page is a new session), so both are freed at once. Uses the app's Gradio state holder.
    """
    if holder is None or not session:
        return
    try:
        holder.delete_state(session)
        with holder.lock:
            holder.session_data.pop(session, None)
            holder.time_last_used.pop(session, None)
    except (KeyError, AttributeError):  # already gone, or a Gradio whose holder works differently
        logger.debug("could not free the state of session %s", session, exc_info=True)
