"""What the secretary's model writes: the six content sections of the report as JSON (:class:`ReportDraft`),
and the bounded version a small local model is asked for (:class:`ShortReportDraft`)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints, field_validator, model_validator

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_BULLET = re.compile(r"^\s*(?:[-•*·]|\d+[.、)）]|[（(]\d+[)）])\s*")


class ReportDraft(BaseModel):
    """What the model writes: the six content sections (field names are explained in ``secretary/system``)."""

    subject: Text
    purpose: Text
    facts: Text
    analysis: Text
    advice: list[Text]
    risks: list[Text]

    @field_validator("advice", "risks", mode="before")
    @classmethod
    def _lines_to_list(cls, value: object) -> object:
        """A model that writes a list as one string of lines gets it split, bullets and numbers removed."""
        if isinstance(value, str):
            return [_BULLET.sub("", line) for line in value.splitlines() if line.strip()]
        return value


#: The small prompt's lengths as bounds of the schema sent to the server (characters of each string, items of
#: each list). llama-server turns ``maxLength``/``maxItems`` into its grammar, so a small model cannot run on:
#: unbounded, the 0.5B wrote the same advice line until ``max_tokens`` in 4 of 6 reports and no report came
#: out (``benchmarks/secretary_local.py``). They are written into the schema only, not checked on the answer:
#: a server that ignores them gets the report as written. At most ~900 characters in all (the 0.5B writes
#: ~12 tokens/s on two cores, about 1.4 characters a token).
SHORT_BOUNDS = {
    "subject": 40,
    "purpose": 60,
    "facts": 150,
    "analysis": 250,
    "advice": (3, 90),
    "risks": (2, 70),
}
SENTENCE_END = "。！？；.!?;）)」”"
CUT_MARK = "…"


def _bound(schema: dict) -> None:
    """:data:`SHORT_BOUNDS` written into a draft's JSON schema (pydantic's ``json_schema_extra``); the class's
    docstring is not sent (the schema is part of the prompt, which a CPU reads token by token)."""
    schema.pop("description", None)
    for name, bound in SHORT_BOUNDS.items():
        prop = schema["properties"][name]
        if isinstance(bound, tuple):
            prop["maxItems"], prop["items"]["maxLength"] = bound
        else:
            prop["maxLength"] = bound


class ShortReportDraft(ReportDraft):
    """:class:`ReportDraft` whose JSON schema bounds every section (:data:`SHORT_BOUNDS`): what the secretary
    asks of a small local model (``prompt_variant`` small or tuned)."""

    model_config = ConfigDict(json_schema_extra=_bound)

    @model_validator(mode="after")
    def _mark_cut(self) -> ShortReportDraft:
        """A section the server stopped at its bound in mid-sentence ends in "…", so no reader takes the cut
        for the end of the sentence."""

        def marked(text: str, bound: int) -> str:
            return text + CUT_MARK if len(text) >= bound and not text.endswith(tuple(SENTENCE_END)) else text

        for name, bound in SHORT_BOUNDS.items():
            value = getattr(self, name)
            if isinstance(bound, tuple):
                object.__setattr__(self, name, [marked(v, bound[1]) for v in value])
            else:
                object.__setattr__(self, name, marked(value, bound))
        return self
