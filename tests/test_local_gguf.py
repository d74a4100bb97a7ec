"""The ``transformers`` backend on a GGUF file, a chat template from the settings, and end-of-turn stops.

The GGUF files are written in the test (:func:`~tests.fakes.tiny_lm.save_tiny_gguf`): a tiny llama whose
greedy answer is one chosen token forever, with Gemma's turn tokens and no chat template, like the Gemma 3
base model's GGUF.
"""

from __future__ import annotations

import doctest

import pytest

from lawluo.llm import local_loading, local_prompting
from lawluo.llm.answer import cut_at
from lawluo.llm.errors import ModelUnavailable
from lawluo.llm.options import TransformersOptions
from lawluo.llm.transformers_backend import TransformersBackend, clear_model_cache

from .conftest import ROOT
from .fakes.tiny_lm import build_tiny_tokenizer, save_tiny_gguf

pytest.importorskip("torch")
pytest.importorskip("gguf")

GEMMA_TEMPLATE = ROOT / "configs" / "chat_templates" / "gemma.jinja"
ASK = [
    {"role": "system", "content": "你是一名中国律师。"},
    {"role": "user", "content": "我的房东不退押金，我该怎么办？"},
]


@pytest.fixture(scope="module")
def ggufs(tmp_path_factory):
    root = tmp_path_factory.mktemp("gguf")
    return {
        "end_of_turn": save_tiny_gguf(root / "turn" / "tiny-end-of-turn.gguf"),
        "letter": save_tiny_gguf(root / "letter" / "tiny-letter.gguf", emit="A"),
        "unknown_arch": save_tiny_gguf(root / "odd" / "tiny-odd.gguf", architecture="nosucharch"),
    }


@pytest.fixture(autouse=True, scope="module")
def _empty_cache_after_module():
    yield
    clear_model_cache()


class GenerateSpy:
    """Wraps a loaded model's ``generate``: the keyword arguments and the number of new tokens of each call."""

    def __init__(self, model):
        self.original, self.calls, self.new_tokens = model.generate, [], []

    def __call__(self, **kwargs):
        output = self.original(**kwargs)
        self.calls.append(kwargs)
        self.new_tokens.append(output.shape[1] - kwargs["input_ids"].shape[1])
        return output


def gguf_backend(path, **options) -> TransformersBackend:
    options = {"gguf_file": str(path), "temperature": 0, "max_tokens": 6, "device": "cpu", **options}
    return TransformersBackend(TransformersOptions(**options))


def spy_on(llm, monkeypatch) -> GenerateSpy:
    model = llm.load().model
    spy = GenerateSpy(model)
    monkeypatch.setattr(model, "generate", spy)
    return spy


def test_a_gguf_with_a_supplied_template_stops_at_the_end_of_turn_token(ggufs, monkeypatch):
    llm = gguf_backend(ggufs["end_of_turn"], chat_template=str(GEMMA_TEMPLATE))
    assert llm.available and llm.describe() == "transformers · tiny-end-of-turn.gguf"
    spy = spy_on(llm, monkeypatch)
    tokenizer = llm.load().tokenizer
    end_of_turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
    assert (
        tokenizer.eos_token == "<|endoftext|>" and tokenizer.chat_template is None
    )  # as in Gemma's base GGUF

    answer = llm.chat(ASK)
    assert answer == "" and cut_at(answer) is None
    assert spy.new_tokens == [1]  # stopped at <end_of_turn>, not after max_tokens=6
    assert end_of_turn in spy.calls[0]["eos_token_id"]
    assert tokenizer.eos_token_id in spy.calls[0]["eos_token_id"]
    prompt = tokenizer.decode(spy.calls[0]["input_ids"][0])
    assert prompt == (
        "<|endoftext|><start_of_turn>user\n你是一名中国律师。\n\n我的房东不退押金，我该怎么办？<end_of_turn>\n"
        "<start_of_turn>model\n"
    )
    assert "".join(llm.stream(ASK)) == "" and spy.new_tokens[1] == 1
    assert llm.setup_notes() == {"chat_template": str(GEMMA_TEMPLATE), "stop_tokens": "<end_of_turn>"}


def test_the_weights_come_from_the_gguf_and_a_template_can_be_given_as_text(ggufs, monkeypatch):
    template = GEMMA_TEMPLATE.read_text(encoding="utf-8")
    llm = gguf_backend(ggufs["letter"], chat_template=template)
    spy = spy_on(llm, monkeypatch)
    answer = llm.chat(ASK)
    assert answer == "A" * 6 and spy.new_tokens == [6]
    assert cut_at(answer) == 6  # ran to max_tokens: the caller is told it was cut
    stream = llm.stream(ASK, max_tokens=3)
    assert "".join(stream) == "AAA" and cut_at(stream) == 3
    assert llm.setup_notes()["chat_template"] == f"from the settings ({len(template)} characters)"


def test_model_may_name_the_gguf_file_or_its_folder(ggufs):
    path = ggufs["letter"]
    by_path = TransformersBackend(TransformersOptions(model=str(path), chat_template=str(GEMMA_TEMPLATE)))
    in_folder = TransformersBackend(
        TransformersOptions(model=str(path.parent), gguf_file=path.name, chat_template=str(GEMMA_TEMPLATE))
    )
    assert local_loading.resolve_load_key(by_path.options) == local_loading.resolve_load_key(
        in_folder.options
    )
    assert by_path.load() is in_folder.load()  # one model in memory


def test_stop_tokens_add_stops_and_must_be_single_tokens(ggufs, monkeypatch):
    llm = gguf_backend(ggufs["letter"], chat_template=str(GEMMA_TEMPLATE), stop_tokens=("A",))
    spy = spy_on(llm, monkeypatch)
    assert llm.chat(ASK) == "" and spy.new_tokens == [1]
    bad = gguf_backend(ggufs["letter"], chat_template=str(GEMMA_TEMPLATE), stop_tokens=("押金还没退",))
    with pytest.raises(
        ModelUnavailable, match=r"stop_tokens: '押金还没退' is not one token of .* \(it is \d+\)"
    ):
        bad.chat(ASK)


def test_a_gguf_without_a_chat_template_says_to_set_one(ggufs):
    with pytest.raises(ModelUnavailable) as failure:
        gguf_backend(ggufs["letter"]).chat(ASK)
    message = str(failure.value)
    assert "has no chat template" in message and "set chat_template:" in message and "\n" not in message


def test_a_missing_gguf_file_or_template_file_is_unavailable_before_loading(ggufs, tmp_path):
    folder = ggufs["letter"].parent
    missing = TransformersBackend(TransformersOptions(model=str(folder), gguf_file="other.gguf"))
    reason = missing.unavailable_reason()
    assert reason == (
        f"GGUF file other.gguf is not in {folder} (the .gguf files there: tiny-letter.gguf); "
        "set gguf_file: to one of them, or to the file's path"
    )
    with pytest.raises(ModelUnavailable, match="other.gguf is not in"):
        missing.chat(ASK)
    no_template = gguf_backend(ggufs["letter"], chat_template=str(tmp_path / "gemma.jinja"))
    assert "chat_template file" in no_template.unavailable_reason()
    assert "does not exist" in no_template.unavailable_reason()
    not_a_template = gguf_backend(ggufs["letter"], chat_template="gemma")
    assert "neither a Jinja template" in not_a_template.unavailable_reason()


def test_an_architecture_transformers_cannot_read_from_gguf_is_one_line_saying_what_to_do(ggufs):
    with pytest.raises(ModelUnavailable) as failure:
        gguf_backend(ggufs["unknown_arch"], chat_template=str(GEMMA_TEMPLATE)).chat(ASK)
    message = str(failure.value)
    assert "nosucharch" in message and "\n" not in message
    assert "transformers cannot read this architecture from GGUF" in message


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({}, "model must name a hub id or a local path"),
        ({"model": "./m", "gguf_file": "m.bin"}, "must name a .gguf file"),
        ({"model": "./m.gguf", "quantization": "4bit"}, "cannot apply to a GGUF file"),
        ({"model": "./m", "chat_template": "  "}, "chat_template is empty"),
    ],
)
def test_bad_gguf_settings_are_refused_when_the_settings_load(options, error):
    with pytest.raises(ValueError, match=error):
        TransformersOptions(**options)


def test_stop_tokens_from_the_environment_are_comma_separated():
    options = TransformersOptions(model="./m", stop_tokens="<end_of_turn>, <eos>")
    assert options.stop_tokens == ("<end_of_turn>", "<eos>")


def test_end_of_turn_tokens_are_taken_only_when_the_template_writes_them_as_one_token():
    chatml = build_tiny_tokenizer()  # <|im_end|> is one token; <end_of_turn> is not in its vocabulary
    both = "{{ '<|im_end|>' }}{{ '<end_of_turn>' }}"
    assert local_prompting.chat_format(chatml, "m", both).stop_tokens == ("<|im_end|>",)
    assert local_prompting.chat_format(chatml, "m", "{{ '<|im_start|>' }}").stop_tokens == ()


def test_the_docstring_examples_hold():
    for module in (local_loading, local_prompting):
        assert doctest.testmod(module).failed == 0
