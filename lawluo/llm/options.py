"""The options of each backend, one frozen dataclass per backend, validated in ``__post_init__``.

They live apart from the backends so that loading the settings never imports openai, torch or
transformers. Every field has help text (shown by ``python -m lawluo models --help-options``);
secrets are never options: a key is read from the environment variable named by ``api_key_env``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

QUANTIZATIONS = ("none", "4bit", "8bit")
DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class NoModelOptions:
    """The ``none`` backend takes no options."""


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
    max_tokens: int = field(default=1024, metadata={"help": "Most tokens per answer."})
    timeout: float = field(
        default=60.0, metadata={"help": "Seconds to wait for an answer (or the next streamed piece)."}
    )
    max_retries: int = field(
        default=3, metadata={"help": "Retries on 429, 5xx, dropped connections and timeouts."}
    )
    backoff: float = field(
        default=1.0, metadata={"help": "Seconds before the first retry; doubles each time (with jitter)."}
    )
    concurrency: int = field(default=8, metadata={"help": "Requests in flight at once from this process."})
    json_mode: bool = field(
        default=False,
        metadata={"help": "Send response_format=json_object with JSON requests (if the server supports it)."},
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
        if self.base_url is not None and not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url {self.base_url!r} must start with http:// or https://")
        _check_generation(self.temperature, self.top_p, self.max_tokens)
        if self.timeout <= 0 or self.max_retries < 0 or self.backoff < 0 or self.concurrency < 1:
            raise ValueError("timeout must be > 0, max_retries and backoff >= 0, concurrency >= 1")


@dataclass(frozen=True)
class TransformersOptions:
    model: str = field(metadata={"help": "Hub id or local path of a causal LM with a chat template."})
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

    def __post_init__(self) -> None:
        if not str(self.model).strip():
            raise ValueError("model must name a hub id or a local path")
        if self.quantization not in QUANTIZATIONS:
            raise ValueError(f"quantization {self.quantization!r} is not one of {', '.join(QUANTIZATIONS)}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if not (self.device in ("auto", "cpu", "cuda") or self.device.startswith("cuda:")):
            raise ValueError(f"device {self.device!r} is not auto, cpu, cuda or cuda:N")
        if self.quantization != "none" and self.device == "cpu":
            raise ValueError(
                f"quantization {self.quantization} uses bitsandbytes on a CUDA GPU; "
                "with device: cpu set quantization: none"
            )
        _check_generation(self.temperature, self.top_p, self.max_tokens)
        if self.stream_timeout <= 0 or self.concurrency < 1:
            raise ValueError("stream_timeout must be > 0 and concurrency >= 1")


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
