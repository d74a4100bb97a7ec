"""Every prompt is a template file with declared fields; each renders, and only with its fields."""

from __future__ import annotations

import pytest

from lawluo import prompts


def test_every_template_file_is_declared_and_every_declaration_has_a_file():
    files = {
        p.relative_to(prompts.PROMPTS_DIR).with_suffix("").as_posix()
        for p in prompts.PROMPTS_DIR.rglob("*.txt")
    }
    assert files == set(prompts.declared())


@pytest.mark.parametrize("name", sorted(prompts.declared()))
def test_each_template_renders_with_exactly_its_declared_fields(name):
    prompt = prompts.load(name)
    assert set(prompt.template.get_identifiers()) == set(prompt.fields), (
        "placeholders differ from prompts.yaml"
    )
    text = prompt.render(**{field: f"<{field}>" for field in prompt.fields})
    assert "$" not in text.replace("<", "")
    assert prompt.purpose


def test_missing_or_unexpected_fields_are_refused():
    with pytest.raises(prompts.PromptError, match="missing field"):
        prompts.render("structured/json_retry", error="x")
    with pytest.raises(prompts.PromptError, match=r"unexpected field\(s\) \['extra'\]"):
        prompts.render("structured/json_instructions", schema="{}", extra=1)
    with pytest.raises(prompts.PromptError, match="no prompt 'nope'"):
        prompts.render("nope")
