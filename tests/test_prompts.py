"""Every prompt is a template file with declared fields; each renders, and only with its fields."""

from __future__ import annotations

import pytest

from lawluo import prompts


def test_every_template_file_is_declared_and_every_declaration_has_a_file():
    files = {
        (p.parent if p.name == "prompt.txt" else p.with_suffix(""))
        .relative_to(prompts.PROMPTS_DIR)
        .as_posix()
        for p in prompts.PROMPTS_DIR.rglob("*.txt")
    }
    assert files == set(prompts.declared())


# -- judges: folders with prompt.txt and judge.yaml (the contract of the reply) ----------------------


@pytest.mark.parametrize("name", prompts.judges())
def test_each_judge_names_a_reply_contract_that_exists(name):
    spec = prompts.judge(name)
    assert spec.fields == prompts.load(name).fields and spec.purpose
    if spec.reply == "json":
        assert spec.schema_type() is not None  # the class is importable
    else:
        assert callable(spec.parser_function())


def test_the_judges_are_the_metrics_and_the_tree_bench():
    assert prompts.judges() == [
        "metrics/consistency",
        "metrics/extract_claims",
        "metrics/extract_statutes",
        "metrics/judge_claim",
        "metrics/pairwise",
        "metrics/relevance",
        "metrics/single_score",
        "tolc/bench_pairwise",
        "tolc/bench_recovered",
    ]


def test_the_two_pairwise_judges_share_one_schema():
    from lawluo.metrics.pairwise import PairVerdict

    assert prompts.judge("metrics/pairwise").schema_type() is PairVerdict
    assert prompts.judge("tolc/bench_pairwise").schema_type() is PairVerdict


def test_the_score_judge_is_read_by_the_parser_it_names():
    from lawluo.metrics import single_score

    assert prompts.judge("metrics/single_score").parser_function() is single_score.parse_score


def test_a_judge_declared_twice_or_without_a_contract_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "metrics" / "fresh"
    folder.mkdir(parents=True)
    (folder / "prompt.txt").write_text("评价：${answer}", encoding="utf-8")
    (folder / "judge.yaml").write_text("purpose: p\nfields: [answer]\nreply: json\n", encoding="utf-8")
    (tmp_path / "prompts.yaml").write_text("other:\n  fields: []\n  purpose: p\n", encoding="utf-8")
    monkeypatch.setattr(prompts, "PROMPTS_DIR", tmp_path)
    monkeypatch.setattr(prompts, "INDEX", tmp_path / "prompts.yaml")
    for cached in (prompts.declared, prompts.load, prompts.judge, prompts._pattern):
        cached.cache_clear()
    try:
        assert prompts.load("metrics/fresh").render(answer="甲") == "评价：甲"
        with pytest.raises(prompts.PromptError, match="needs reply json \\+ schema"):
            prompts.judge("metrics/fresh")
        (tmp_path / "prompts.yaml").write_text(
            "metrics/fresh:\n  fields: []\n  purpose: p\n", encoding="utf-8"
        )
        prompts.declared.cache_clear()
        with pytest.raises(prompts.PromptError, match="declared twice"):
            prompts.declared()
    finally:
        monkeypatch.undo()
        for cached in (prompts.declared, prompts.load, prompts.judge, prompts._pattern):
            cached.cache_clear()


@pytest.mark.parametrize("name", sorted(prompts.declared()))
def test_a_rendering_is_traced_back_to_its_template(name):
    prompt = prompts.load(name)
    text = prompt.render(**{field: f"<{field} 的值>" for field in prompt.fields})
    assert prompts.rendered_from(text + "\n（调用方附加的说明）") == name


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
