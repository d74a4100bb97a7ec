"""Which OpenAI-compatible server a role talks to, asked once, and what that means for its requests.

Servers differ where LawLuo notices it (issue 21):

- **system messages**: llama-cpp-python's ``gemma`` and ``mistral-instruct`` chat formats silently drop
  them (``llama_cpp/llama_chat_format.py``: ``format_gemma`` renders with ``system_message=""``), and its
  ``/v1/models`` does not say which format is in use; llama.cpp's ``llama-server`` says in ``GET /props``
  whether its chat template takes a system role (``chat_template_caps.supports_system_role``, or the
  template itself); a vLLM or Ollama template that cannot take one makes the request fail with a message
  saying so, and the backend then merges (:func:`rejects_system_role`).
- **constrained JSON**: ``response_format: {"type": "json_schema", "json_schema": {…}}`` is understood by
  llama-server, vLLM, Ollama and OpenAI; llama-cpp-python 0.3.36 accepts only ``json_object``, with the
  schema in a ``schema`` field (``ChatCompletionRequestResponseFormat``), and answers any other type with a
  500 naming ``response_format`` (its validation errors are not 422s); DeepSeek takes ``json_object`` only.

The server is recognised by ``owned_by`` in ``GET {base_url}/models``: ``"llamacpp"`` (llama-server),
``"me"`` (llama-cpp-python), ``"vllm"``; Ollama's is the model's namespace (``"library"``), and it listens
on port 11434. Hosted APIs are recognised by their host without a request.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

LABELS = {
    "llama-server": "llama.cpp's llama-server",
    "llama-cpp-python": "llama-cpp-python's server",
    "vllm": "vLLM",
    "ollama": "Ollama",
    "openai": "the OpenAI API",
    "deepseek": "the DeepSeek API",
    "dashscope": "Qwen on DashScope",
    "unknown": "an OpenAI-compatible server",
}
HOSTS = {"api.openai.com": "openai", "api.deepseek.com": "deepseek", "dashscope.aliyuncs.com": "dashscope"}
OWNERS = {
    "llamacpp": "llama-server",
    "me": "llama-cpp-python",
    "vllm": "vllm",
    "library": "ollama",
    "ollama": "ollama",
}
OLLAMA_PORT = 11434
JSON_SCHEMA_SERVERS = ("llama-server", "vllm", "ollama", "openai")

# A server's error text saying that the chat template cannot take the system message (Gemma 2's template:
# "System role not supported"; Mistral's: "Conversation roles must alternate user/assistant/…").
_SYSTEM_REJECTED = re.compile(
    r"system[^.]{0,40}(not supported|not allowed|unsupported|invalid|rejected)"
    r"|(not supported|not allowed|unsupported|invalid)[^.]{0,40}system"
    r"|roles must alternate",
    re.I,
)
_GENERIC_ROLE = re.compile(r"""\[\s*['"]role['"]\s*\]\s*}}|\.role\s*}}""")
# A server's error text blaming the request's response_format (or the grammar made from its schema).
_FORMAT_REJECTED = re.compile(r"response_format|json_schema|json_object|grammar", re.I)


@dataclass(frozen=True)
class ServerInfo:
    """What the probe found: the server's ``kind`` (a key of :data:`LABELS`), whether its chat template
    takes a system message (``None``: it did not say), how that was found out, and whether the server
    answered at all (``reachable``: False means ask again later)."""

    kind: str = "unknown"
    system_role: bool | None = None
    evidence: str = ""
    reachable: bool = True

    @property
    def label(self) -> str:
        return LABELS.get(self.kind, LABELS["unknown"])


def known_host(base_url: str) -> ServerInfo | None:
    """A hosted API recognised by its host name, without a request; ``None`` for any other server.

    >>> known_host("https://api.deepseek.com/v1").kind, known_host("http://127.0.0.1:8080/v1")
    ('deepseek', None)
    """
    host = (urlsplit(base_url).hostname or "").lower()
    kind = HOSTS.get(host)
    return ServerInfo(kind, evidence=f"its host {host}") if kind else None


def probe(base_url: str, model: str, api_key: str | None, timeout: float) -> ServerInfo:
    """Ask the server at ``base_url`` (ending in ``/v1``) what it is: ``GET /models``, and for llama-server
    ``GET /props``. Never raises: any failure is an ``unknown`` server with the reason in ``evidence``
    (``reachable=False`` when the connection itself failed)."""
    import httpx

    hosted = known_host(base_url)
    if hosted is not None:
        return hosted
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    port = urlsplit(base_url).port
    try:
        with httpx.Client(timeout=timeout, headers=headers, follow_redirects=False) as client:
            listing = client.get(f"{base_url}/models")
            if listing.status_code != 200:
                return ServerInfo(evidence=f"GET /models answered {listing.status_code}")
            owner = model_owner(listing.json(), model)
            kind = OWNERS.get(owner, "ollama" if port == OLLAMA_PORT else "unknown")
            evidence = f'/v1/models says owned_by "{owner}"' if owner else "/v1/models names no owner"
            if kind != "llama-server":
                return ServerInfo(kind, evidence=evidence)
            root = re.sub(r"/v1$", "", base_url)
            props = client.get(f"{root}/props")
            if props.status_code != 200:
                return ServerInfo(kind, evidence=f"{evidence}; GET /props answered {props.status_code}")
            takes_system, how = template_takes_system(props.json())
            return ServerInfo(kind, takes_system, f"{evidence}; {how}")
    except httpx.TransportError as exc:
        logger.warning("server probe of %s failed: %s", base_url, exc)
        return ServerInfo(evidence=f"could not reach the server ({type(exc).__name__})", reachable=False)
    except ValueError as exc:  # a body that is not JSON
        logger.warning("server probe of %s: unreadable answer: %s", base_url, exc)
        return ServerInfo(evidence="its /models answer is not JSON")


def model_owner(listing: Any, model: str) -> str:
    """``owned_by`` of ``model`` in a ``/v1/models`` listing (of its first model if ``model`` is not listed).

    >>> model_owner({"data": [{"id": "a", "owned_by": "vllm"}, {"id": "b", "owned_by": "me"}]}, "b")
    'me'
    """
    data = listing.get("data") if isinstance(listing, dict) else None
    entries = [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    chosen = next((e for e in entries if e.get("id") == model), entries[0] if entries else {})
    owner = chosen.get("owned_by")
    return owner.strip()[:40] if isinstance(owner, str) else ""


def template_takes_system(props: Any) -> tuple[bool | None, str]:
    """Whether llama-server's chat template takes a system message, from its ``/props``, and how it was told.

    ``chat_template_caps.supports_system_role`` when the server reports it (recent llama-server);
    else the template text: one that raises on a system role, or never mentions one, cannot take it.

    >>> template_takes_system({"chat_template_caps": {"supports_system_role": False}})[0]
    False
    >>> template_takes_system({"chat_template": "{% if messages[0]['role'] == 'system' %}{{ raise_exception("
    ...     "'System role not supported') }}{% endif %}"})[0]
    False
    >>> template_takes_system({"chat_template": "{% for m in messages %}<start_of_turn>{{ m['content'] }}"})
    (False, 'its chat template never mentions a system role')
    """
    if not isinstance(props, dict):
        return None, "/props is not a JSON object"
    caps = props.get("chat_template_caps")
    if isinstance(caps, dict) and isinstance(caps.get("supports_system_role"), bool):
        value = caps["supports_system_role"]
        return value, f"/props says supports_system_role: {str(value).lower()}"
    template = props.get("chat_template")
    if not isinstance(template, str) or not template.strip():
        return None, "/props shows no chat template"
    if _SYSTEM_REJECTED.search(template):
        return False, "its chat template raises an error on a system role"
    if "system" in template.lower():
        return True, "its chat template handles a system role"
    if _GENERIC_ROLE.search(template):
        return True, "its chat template writes any role as it is"
    return False, "its chat template never mentions a system role"


def choose_system_message(info: ServerInfo) -> tuple[str, str]:
    """``("keep" | "merge", why)`` for ``system_message: auto``.

    >>> choose_system_message(ServerInfo("llama-cpp-python", evidence='owned_by "me"'))[0]
    'merge'
    """
    if info.kind == "llama-cpp-python":
        return "merge", (
            "its /v1/models does not say which chat format it uses, and some (gemma, mistral-instruct) "
            "drop system messages"
        )
    if info.system_role is False:
        return "merge", f"the chat template cannot take a system role: {info.evidence}"
    if info.system_role is True:
        return "keep", f"the chat template takes a system role: {info.evidence}"
    return "keep", "merged from then on if the server rejects a system message"


def choose_response_format(info: ServerInfo) -> tuple[str, str]:
    """``("json_schema" | "json_object", why)`` for ``response_format: auto``.

    >>> choose_response_format(ServerInfo("vllm"))[0], choose_response_format(ServerInfo("deepseek"))[0]
    ('json_schema', 'json_object')
    """
    if info.kind in JSON_SCHEMA_SERVERS:
        return "json_schema", f"{info.label} constrains the answer to the schema"
    if info.kind == "llama-cpp-python":
        return "json_object", f"{info.label} takes json_object with the schema, which it turns into a grammar"
    return "json_object", f"{info.label}: json_object, the most widely supported"


def rejects_system_role(detail: str) -> bool:
    """Whether a server's error text says the chat template cannot take the system message.

    >>> rejects_system_role("System role not supported"), rejects_system_role("prompt is too long")
    (True, False)
    """
    return bool(_SYSTEM_REJECTED.search(detail or ""))


def rejects_response_format(detail: str) -> bool:
    """Whether a server's error text blames the request's ``response_format``.

    >>> rejects_response_format("1 validation error: {'loc': ('body', 'response_format', 'type')}")
    True
    """
    return bool(_FORMAT_REJECTED.search(detail or ""))
