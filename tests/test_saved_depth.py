"""A saved consultation nested deeper than :data:`~lawluo.firm.saved.MAX_DEPTH` is refused with a message
before ``json.loads`` recurses (200,000 ``[`` made it raise ``RecursionError``, which the page showed as
a bare "Error"); brackets inside strings do not count, and a real consultation is far from the bound."""

from __future__ import annotations

import json
import sys
import time

import pytest

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.firm.saved import (
    MAX_DEPTH,
    SavedConsultationError,
    check_depth,
    loads_saved,
    nesting_depth,
)
from lawluo.firm.state import Consultation
from lawluo.llm import LanguageModels
from lawluo.ui import consult_tab as tab
from lawluo.ui.visitors import Visit

QUESTION = "我在公司干了两年一直没签劳动合同，现在老板把我辞退了，我能要求什么赔偿？"
ALICE = Visit(session="s-alice", owner="alice")
DEEP = ["[" * 200_000, "[" * 200_000 + "]" * 200_000, '{"a":' * 100_000 + "1" + "}" * 100_000]


@pytest.fixture(scope="module")
def firm(firm_services):
    settings = load_settings(environ={})
    return Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)


@pytest.fixture(scope="module")
def saved(firm) -> str:
    """A real consultation (asked, tree marked, answered) as the browser keeps it."""
    state = list(tab.ask(firm, None, QUESTION, True, 3, 3, visit=ALICE))[-1].state
    tab.mark(firm, state, "1", "yes", ALICE)
    return tab.remembered(state, ALICE)


@pytest.mark.parametrize("text", DEEP, ids=["200k-open-arrays", "200k-closed-arrays", "100k-objects"])
def test_deep_nesting_is_refused_before_json_recurses(text):
    with pytest.raises(SavedConsultationError) as refused:
        loads_saved(text)
    message = str(refused.value)
    assert f"最多 {MAX_DEPTH} 层" in message and f"at most {MAX_DEPTH} are allowed" in message
    assert isinstance(refused.value, ValueError) and refused.value.__context__ is None  # no RecursionError


def test_the_bound_is_exact_and_small():
    assert 8 <= MAX_DEPTH <= 64
    assert loads_saved("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(SavedConsultationError, match=f"nests arrays and objects {MAX_DEPTH + 1} deep"):
        check_depth("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"a": ["[" * 5000, "{" * 5000, 'x\\"[[[["', "\\" * 9]})
    assert nesting_depth(text) == 2
    assert loads_saved(text)["a"][0] == "[" * 5000
    assert nesting_depth('["\\\\", [[1]]]') == 3  # an escaped backslash ends before the quote
    assert nesting_depth('"[[[') == 0  # an unterminated string runs to the end, as json.loads reads it


def test_text_that_is_not_json_still_fails_as_json():
    with pytest.raises(json.JSONDecodeError):
        loads_saved("{not json")
    with pytest.raises(json.JSONDecodeError):
        loads_saved('["' + "[" * 100_000)  # the brackets are inside a string that never ends


def test_the_scan_takes_linear_time_on_hostile_text():
    """2 MB of the shapes that make a naive string pattern backtrack: well under a second each."""
    for text in ('"\\' * 1_000_000, '"\\"' * 660_000, '["' * 1_000_000, "[" * 2_000_000):
        start = time.perf_counter()
        nesting_depth(text)
        assert time.perf_counter() - start < 2.0


def test_a_real_consultation_is_well_within_the_bound(saved, firm):
    assert nesting_depth(saved) <= 8 < MAX_DEPTH
    assert Consultation.from_dict(loads_saved(saved), firm.domains).id == json.loads(saved)["id"]


def test_an_uploaded_or_kept_file_nested_200000_deep_gets_a_message(firm, tmp_path):
    """Through the tab's handlers: the upload and the browser's copy (``lawluo.firm.state`` parses with
    :func:`loads_saved`)."""
    text = DEEP[0]
    assert sys.getrecursionlimit() < 200_000
    with pytest.raises(ValueError, match=f"最多 {MAX_DEPTH} 层") as refused:
        tab.parse_saved(firm, text)
    assert "文件内容不符合咨询记录的格式" in str(refused.value) and str(tmp_path) not in str(refused.value)
    upload = tmp_path / "deep.json"
    upload.write_text(text)
    page = tab.resume_consultation(firm, None, str(upload), ALICE)
    assert f"at most {MAX_DEPTH} are allowed" in page.message and page.state is None
    page = tab.restore_consultation(firm, None, text, ALICE)
    assert f"at most {MAX_DEPTH} are allowed" in page.message and page.stored == tab.NOTHING_STORED
