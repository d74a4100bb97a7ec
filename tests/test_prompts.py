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


LAWYER = {"question": "问", "confirmed": "-", "denied": "-", "statutes": "-", "length": 600}


def test_a_variant_falls_back_in_order_and_may_leave_out_fields():
    fields = {"question": "房东不退押金", "path": "（无）", "material": "- 是否签了合同？", "k": 3}
    tuned = prompts.render("tolc/expand", "tuned", cases="<案例>", **fields)
    assert tuned == prompts.load("tolc/expand.tuned").render(**fields)  # the cases are not shown
    assert "<案例>" in prompts.render("tolc/expand", "small", cases="<案例>", **fields)
    # a role with no tuned template gets the small one, then the default
    assert prompts.render("lawyer/turn", "tuned", **LAWYER) == prompts.render(
        "lawyer/turn", "small", **LAWYER
    )
    with pytest.raises(prompts.PromptError, match="prompt variant 'huge'"):
        prompts.render("tolc/system", "huge")
    with pytest.raises(prompts.PromptError, match=r"unexpected field\(s\) \['extra'\]"):
        prompts.render("tolc/expand", "tuned", cases="", extra=1, **fields)  # only the base's fields drop


def test_settings_accept_exactly_the_known_variants():
    from lawluo.config import Settings

    assert Settings(prompt_variant="tuned").prompt_variant == "tuned"
    with pytest.raises(ValueError, match="prompt_variant must be one of default, small, tuned"):
        Settings(prompt_variant="huge")
