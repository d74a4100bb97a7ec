"""The options of each backend, one frozen dataclass per backend, validated in ``__post_init__``.

They live apart from the backends so that loading the settings never imports openai, torch or
transformers. Every field has help text (shown by ``python -m lawluo models --help-options``);
secrets are never options: a key is read from the environment variable named by ``api_key_env``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .zerogpu import SPACES_REQUIREMENT, spaces_installed

QUANTIZATIONS = ("none", "4bit", "8bit")
DTYPES = ("auto", "float32", "bfloat16", "float16")
SYSTEM_MESSAGES = ("auto", "keep", "merge")
RESPONSE_FORMATS = ("auto", "json_schema", "json_object", "none")


@dataclass(frozen=True)
class NoModelOptions:
    """The ``none`` backend takes no options."""


def _check_http(options: OpenAIOptions | AnthropicOptions) -> None:
    """What the options of every backend over HTTP must hold: a URL that is one, sane generation settings,
    positive timeouts, retries and slots."""
    if options.base_url is not None and not options.base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url {options.base_url!r} must start with http:// or https://")
    _check_generation(options.temperature, options.top_p, options.max_tokens)
    if options.timeout <= 0 or options.max_retries < 0 or options.backoff < 0 or options.concurrency < 1:
        raise ValueError("timeout must be > 0, max_retries and backoff >= 0, concurrency >= 1")
    if options.call_timeout is not None and options.call_timeout <= 0:
        raise ValueError(f"call_timeout {options.call_timeout} must be > 0 (or unset)")


@dataclass(frozen=True)
class OpenAIOptions:
    model: str = field(
        metadata={"help": "Model name on the server (gpt-4o, deepseek-chat, qwen-plus, a vLLM LoRA name)."}
    )
    base_url: str | None = field(
        default=None,
        metadata={
            "help": "Server URL ending in /v1; unset uses OPENAI_BASE_URL, then https://api.openai.com/v1."
        },
    )
    api_key_env: str = field(
        default="OPENAI_API_KEY",
        metadata={"help": "Name of the environment variable that holds the API key."},
    )
    api_key_required: bool = field(
        default=True, metadata={"help": "false for servers that take any key (a local vLLM or Ollama)."}
    )
    temperature: float = field(default=0.7, metadata={"help": "Sampling temperature."})
    top_p: float | None = field(
        default=None, metadata={"help": "Nucleus sampling; unset keeps the server's."}
    )
    max_tokens: int = field(
        default=1024,
        metadata={
            "help": "Most tokens per answer (a call may ask for fewer); an answer cut here is reported as cut."
        },
    )
    timeout: float = field(
        default=60.0,
        metadata={
            "help": "Seconds to wait for the first streamed piece of an answer and then for each next one "
            "(with stream: false, for the whole answer): on a slow CPU server this covers reading the whole prompt."
        },
    )
    call_timeout: float | None = field(
        default=None,
        metadata={
            "help": "Seconds for a whole call, retries included; unset: only the step's time budget bounds it."
        },
    )
    max_retries: int = field(
        default=3,
        metadata={
            "help": "Retries on 429, 5xx and dropped connections (and on timeouts when retry_timeouts is true)."
        },
    )
    retry_timeouts: bool = field(
        default=False,
        metadata={
            "help": "Also re-send a request that timed out. Off by default: the server may still be generating "
            "the first one, and a retry queues a second copy behind it."
        },
    )
    backoff: float = field(
        default=1.0, metadata={"help": "Seconds before the first retry; doubles each time (with jitter)."}
    )
    concurrency: int = field(default=8, metadata={"help": "Requests in flight at once from this process."})
    stream: bool = field(
        default=True,
        metadata={
            "help": "Stream every call (whole answers and JSON too), so that a timeout, a cancellation or "
            "closing stops the server's generation; false for a server that cannot stream, or for a big batch "
            "(one response per call instead of one event per token: less client CPU)."
        },
    )
    system_message: str = field(
        default="auto",
        metadata={
            "help": "keep: send system messages as they are; merge: put their text before the first user "
            "message (for chat templates that drop or reject a system role, e.g. Gemma's); auto: ask the "
            "server once (llama.cpp, llama-cpp-python, vLLM, Ollama) and merge where its template cannot "
            "take a system role, or after the server rejects one."
        },
    )
    response_format: str = field(
        default="auto",
        metadata={
            "help": "How JSON answers are constrained: json_schema (the answer's schema is sent: llama.cpp's "
            "llama-server, vLLM, Ollama, OpenAI), json_object (any JSON object; llama-cpp-python gets the "
            "schema with it; DeepSeek), none; auto: chosen for the server, falling back (json_schema → "
            "json_object → none) when the server rejects one."
        },
    )
    json_mode: bool | None = field(
        default=None,
        metadata={
            "help": "Deprecated, use response_format: true means json_object and false means none (when "
            "response_format is auto)."
        },
    )
    extra_body: dict = field(
        default_factory=dict,
        metadata={
            "help": "Extra request fields passed through, e.g. {enable_thinking: false} for Qwen3 on vLLM."
        },
    )

    def __post_init__(self) -> None:
        if not str(self.model).strip():
            raise ValueError("model must name the model on the server")
        _check_http(self)
        if self.system_message not in SYSTEM_MESSAGES:
            raise ValueError(
                f"system_message {self.system_message!r} is not one of {', '.join(SYSTEM_MESSAGES)}"
            )
        if self.response_format not in RESPONSE_FORMATS:
            raise ValueError(
                f"response_format {self.response_format!r} is not one of {', '.join(RESPONSE_FORMATS)}"
            )
        if self.json_mode is not None and self.response_format != "auto":
            raise ValueError("json_mode is a deprecated alias of response_format: set only response_format")

    @property
    def json_format(self) -> str:
        """``response_format`` with the deprecated ``json_mode`` applied: auto, json_schema, json_object or none."""
        if self.response_format == "auto" and self.json_mode is not None:
            return "json_object" if self.json_mode else "none"
        return self.response_format


@dataclass(frozen=True)
class AnthropicOptions:
    """Anthropic's Messages API (``POST /v1/messages``), through :class:`~lawluo.llm.http.HttpChatBackend`."""

    model: str = field(metadata={"help": "Model name, e.g. claude-sonnet-4-5 or claude-haiku-4-5."})
    base_url: str | None = field(
        default=None,
        metadata={
            "help": "Server URL without /v1 (a proxy, a test server); unset: https://api.anthropic.com."
        },
    )
    api_key_env: str = field(
        default="ANTHROPIC_API_KEY",
        metadata={"help": "Name of the environment variable that holds the API key (sent as x-api-key)."},
    )
    api_key_required: bool = field(
        default=True, metadata={"help": "false for a proxy that adds the key itself."}
    )
    temperature: float = field(default=0.7, metadata={"help": "Sampling temperature, 0–1."})
    top_p: float | None = field(
        default=None, metadata={"help": "Nucleus sampling; unset keeps the server's."}
    )
    max_tokens: int = field(
        default=1024,
        metadata={
            "help": "Most tokens per answer (a call may ask for fewer); an answer cut here is reported as cut."
        },
    )
    timeout: float = field(
        default=60.0,
        metadata={
            "help": "Seconds to wait for the first streamed piece of an answer and then for each next one."
        },
    )
    call_timeout: float | None = field(
        default=None,
        metadata={
            "help": "Seconds for a whole call, retries included; unset: only the step's time budget bounds it."
        },
    )
    max_retries: int = field(
        default=3,
        metadata={
            "help": "Retries on 429, 529 (overloaded), 5xx and dropped connections (and on timeouts when "
            "retry_timeouts is true)."
        },
    )
    retry_timeouts: bool = field(
        default=False,
        metadata={
            "help": "Also re-send a request that timed out (the server may still be generating the first)."
        },
    )
    backoff: float = field(
        default=1.0, metadata={"help": "Seconds before the first retry; doubles each time (with jitter)."}
    )
    concurrency: int = field(default=8, metadata={"help": "Requests in flight at once from this process."})
    stream: bool = field(
        default=True,
        metadata={
            "help": "Stream every call (server-sent events), so that a timeout, a cancellation or closing stops "
            "the server's generation; false: one whole response per call."
        },
    )

    def __post_init__(self) -> None:
        if not str(self.model).strip():
            raise ValueError("model must name the model, e.g. claude-haiku-4-5")
        _check_http(self)
        if self.temperature > 1:
            raise ValueError(f"temperature {self.temperature} is outside 0–1 (Anthropic's range)")


@dataclass(frozen=True)
class TransformersOptions:
    model: str = field(
        default="",
        metadata={
            "help": "Hub id or local path of a causal LM: a save_pretrained folder, a hub repo, or a .gguf file."
        },
    )
    gguf_file: str | None = field(
        default=None,
        metadata={
            "help": "A GGUF file: its name inside `model` (a hub repo or folder), or its path when `model` is "
            "unset. transformers dequantises it to `dtype` (needs the gguf package; llama, qwen2/3, gemma2/3, "
            "phi3, mistral and a few more architectures)."
        },
    )
    chat_template: str | None = field(
        default=None,
        metadata={
            "help": "A Jinja chat template, as text or as the path of a .jinja file, for a model without one "
            "(a base model, most GGUF files) or to replace the model's (configs/chat_templates/gemma.jinja)."
        },
    )
    stop_tokens: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "More tokens that end an answer, besides the model's end-of-sequence token and the template's "
            "end-of-turn token (<end_of_turn>, <|im_end|>, <|eot_id|>, <|end|>: found automatically)."
        },
    )
    adapter: str | None = field(
        default=None, metadata={"help": "Hub id or local path of a PEFT (LoRA) adapter to load on top."}
    )
    quantization: str = field(
        default="none", metadata={"help": "none, 4bit or 8bit (bitsandbytes; needs a CUDA GPU)."}
    )
    device: str = field(
        default="auto", metadata={"help": "auto (GPU if present, else CPU), cpu, cuda or cuda:N."}
    )
    dtype: str = field(default="auto", metadata={"help": "auto, float32, bfloat16 or float16."})
    temperature: float = field(default=0.7, metadata={"help": "Sampling temperature; 0 means greedy."})
    top_p: float | None = field(default=None, metadata={"help": "Nucleus sampling; unset keeps the model's."})
    max_tokens: int = field(default=512, metadata={"help": "Most new tokens per answer."})
    revision: str | None = field(default=None, metadata={"help": "Hub revision (branch, tag or commit)."})
    trust_remote_code: bool = field(
        default=False, metadata={"help": "Allow model code from the hub (only for models you trust)."}
    )
    stream_timeout: float = field(
        default=300.0, metadata={"help": "Seconds to wait for the next streamed token before giving up."}
    )
    concurrency: int = field(
        default=1,
        metadata={"help": "Calls admitted at once; generation itself is serialised (one model, one GPU)."},
    )
    zerogpu: bool | None = field(
        default=None,
        metadata={
            "help": "Run generation inside spaces.GPU, for a Hugging Face Space on ZeroGPU hardware. Unset (auto): "
            "on when SYSTEM=spaces (a Space) and the spaces package is installed; true: always (needs spaces); "
            "false: never. When on, the model loads as the app starts (docs/deployment.md#zerogpu)."
        },
    )
    zerogpu_duration_s: int = field(
        default=60,
        metadata={
            "help": "Seconds of GPU each call asks ZeroGPU for (spaces.GPU(duration=…)): the slowest answer must "
            "fit, and a visitor needs this much quota left; shorter requests are scheduled sooner."
        },
    )

    def __post_init__(self) -> None:
        stops = self.stop_tokens
        if isinstance(stops, str):  # from the environment: comma-separated
            stops = stops.split(",")
        if not isinstance(stops, list | tuple) or not all(isinstance(s, str) for s in stops):
            raise ValueError("stop_tokens must be a list of token strings, e.g. [<end_of_turn>]")
        object.__setattr__(self, "stop_tokens", tuple(s.strip() for s in stops if s.strip()))
        if not str(self.model).strip() and not (self.gguf_file or "").strip():
            raise ValueError(
                "model must name a hub id or a local path (or gguf_file the path of a .gguf file)"
            )
        if self.gguf_file is not None and not self.gguf_file.lower().endswith(".gguf"):
            raise ValueError(f"gguf_file {self.gguf_file!r} must name a .gguf file")
        if self.chat_template is not None and not self.chat_template.strip():
            raise ValueError("chat_template is empty; give a Jinja template or the path of a .jinja file")
        if self.quantization not in QUANTIZATIONS:
            raise ValueError(f"quantization {self.quantization!r} is not one of {', '.join(QUANTIZATIONS)}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if not (self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:")):
            raise ValueError(f"device {self.device!r} is not auto, cpu, cuda or cuda:N")
        if self.quantization != "none" and (self.gguf_file or self.model.lower().endswith(".gguf")):
            raise ValueError(
                f"quantization {self.quantization} cannot apply to a GGUF file, which transformers dequantises "
                "to dtype; set quantization: none (or use the model's safetensors weights)"
            )
        if self.quantization != "none" and self.device == "cpu":
            raise ValueError(
                f"quantization {self.quantization} uses bitsandbytes on a CUDA GPU; "
                "with device: cpu set quantization: none"
            )
        _check_generation(self.temperature, self.top_p, self.max_tokens)
        if self.stream_timeout <= 0 or self.concurrency < 1:
            raise ValueError("stream_timeout must be > 0 and concurrency >= 1")
        if self.zerogpu_duration_s < 1:
            raise ValueError(f"zerogpu_duration_s {self.zerogpu_duration_s} must be at least 1 (seconds)")
        if self.zerogpu and self.device == "cpu":
            raise ValueError("zerogpu: on runs generation on a lent GPU; with device: cpu set zerogpu: off")
        if self.zerogpu and not spaces_installed():
            raise ValueError(
                f"zerogpu: on needs the spaces package, which is not installed: pip install {SPACES_REQUIREMENT} "
                "(a Gradio Space installs it by itself), or leave zerogpu unset (auto)"
            )


@dataclass(frozen=True)
class RewardModelOptions:
    """A reward model for the boss role (LawLuo §3.2, eq. 6): it scores answers and cannot chat."""

    model: str = field(
        metadata={
            "help": "Hub id or local path of an AutoModelForSequenceClassification with one output "
            "(num_labels=1, as TRL's RewardTrainer saves it)."
        }
    )
    device: str = field(
        default="auto", metadata={"help": "auto (GPU if present, else CPU), cpu, cuda or cuda:N."}
    )
    dtype: str = field(default="auto", metadata={"help": "auto, float32, bfloat16 or float16."})
    max_length: int = field(
        default=1024,
        metadata={
            "help": "Most tokens of question + answer scored (longer ones are cut, the question first to a "
            "quarter); match the max_length the model was trained with (TRL's default is 1024)."
        },
    )
    batch_size: int = field(default=8, metadata={"help": "Answers scored in one forward pass."})
    revision: str | None = field(default=None, metadata={"help": "Hub revision (branch, tag or commit)."})
    trust_remote_code: bool = field(
        default=False, metadata={"help": "Allow model code from the hub (only for models you trust)."}
    )
    concurrency: int = field(
        default=1,
        metadata={"help": "Calls admitted at once; scoring itself is serialised (one model, one GPU)."},
    )

    def __post_init__(self) -> None:
        if not str(self.model).strip():
            raise ValueError("model must name a hub id or a local path")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if not (self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:")):
            raise ValueError(f"device {self.device!r} is not auto, cpu, cuda or cuda:N")
        if self.max_length < 16 or self.batch_size < 1 or self.concurrency < 1:
            raise ValueError("max_length must be >= 16, batch_size and concurrency >= 1")


def _check_generation(temperature: float, top_p: float | None, max_tokens: int) -> None:
    if not 0 <= temperature <= 2:
        raise ValueError(f"temperature {temperature} is outside 0–2")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p {top_p} is outside (0, 1]")
    if max_tokens < 1:
        raise ValueError(f"max_tokens {max_tokens} must be at least 1")
