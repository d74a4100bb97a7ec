"""Argument dataclasses shared by the training scripts, each field defined once.

A script's own dataclass inherits the groups it needs, and its parser (``TrlParser`` or
``HfArgumentParser``) turns every field into a flag or a YAML key, as TRL's ``ScriptArguments`` do:

    @dataclass
    class HIPOArguments(PolicyArguments, StatuteArguments):   # + what only HIPO has
        num_rounds: int = field(default=3, metadata={"help": "..."})

- :class:`SharedDataArguments`: ``--data_dir`` (``../shared/data``);
- :class:`LawLuoArguments`: ``--lawluo_config``, the LawLuo settings file (what ``python -m lawluo
  --config`` takes; TRL keeps ``--config`` for the YAML of the training arguments) — its ``assets_dir``
  holds the statute database and the receptionist, its ``models`` give the roles (the boss of RL);
- :class:`StatuteArguments`: ``--statutes``, a statute database that replaces the settings' one;
- :class:`PolicyArguments`: the questions a policy answers (``--dataset``, ``--max_samples``,
  ``--system_prompt``) and its starting adapter (``--init_adapter``): HIPO and RL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from training.shared_data import SHARED_DATA, SOURCES

if TYPE_CHECKING:
    from lawluo.config import Settings
    from lawluo.domains import Domains


@dataclass
class SharedDataArguments:
    """Where the shared data lives."""

    data_dir: str = field(default=str(SHARED_DATA), metadata={"help": "The shared data directory."})


@dataclass
class LawLuoArguments:
    """Which LawLuo settings a script reads (statute database, assets, models)."""

    lawluo_config: str | None = field(
        default=None,
        metadata={
            "help": "LawLuo settings file (YAML, as `python -m lawluo --config`): its assets_dir holds the "
            "statute database and the receptionist, its models give the roles. Unset: $LAWLUO_CONFIG, "
            "else the defaults."
        },
    )

    def settings(self) -> Settings:
        """The LawLuo settings of ``--lawluo_config``, loaded as the CLI loads its ``--config``."""
        from lawluo.config import load_settings

        return load_settings(self.lawluo_config)

    def statutes_path(self) -> Path:
        """The statute database: ``statutes.sqlite`` in the settings' ``assets_dir``."""
        return self.settings().statutes_path

    def domains(self) -> Domains:
        """The consultation domains: the table of the settings' ``domains_file``."""
        from lawluo.domains import load_domains

        return load_domains(self.settings().domains_file)


@dataclass
class StatuteArguments(LawLuoArguments):
    """A statute database that may replace the one of the LawLuo settings."""

    statutes: str | None = field(
        default=None,
        metadata={
            "help": "Statute database (default: statutes.sqlite in the assets_dir of --lawluo_config)."
        },
    )

    def statutes_path(self) -> Path:
        """``--statutes`` when given, else the settings' statute database."""
        return Path(self.statutes) if self.statutes else super().statutes_path()


@dataclass
class PolicyArguments(SharedDataArguments):
    """The questions a policy (the lawyer being tuned) answers, and the adapter it starts from."""

    dataset: list[str] = field(
        default_factory=lambda: ["kinled_consult"],
        metadata={"help": f"Sources of questions (training/data.py): {', '.join(SOURCES)}."},
    )
    max_samples: int | None = field(
        default=None, metadata={"help": "Use at most this many questions (a seeded random subset)."}
    )
    system_prompt: str | None = field(
        default=None,
        metadata={"help": "A system message before every question (use the one the model was trained with)."},
    )
    init_adapter: str | None = field(
        default=None,
        metadata={
            "help": "LoRA adapter of the starting model (e.g. the SFT lawyer of train_lawyer_sft.py): trained "
            "further, with a frozen copy as the reference (its own LoRA settings replace --lora_*)."
        },
    )

    def __post_init__(self) -> None:
        unknown = [s for s in self.dataset if s not in SOURCES]
        if unknown:
            raise ValueError(f"unknown dataset {unknown}; sources: {', '.join(SOURCES)}")
        if self.max_samples is not None and self.max_samples < 1:
            raise ValueError("max_samples must be at least 1")
