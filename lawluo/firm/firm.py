"""The firm's standard operating procedure: the only place that orders the agents (LawLuo paper §3.2).

    firm = Firm.from_settings(Settings.load())
    state = firm.new(client="张先生")
    firm.receive(state, "我在公司干了两年一直没签劳动合同，现在被辞退了怎么办？")   # receptionist routes
    for tree in firm.clarify(state): ...                                        # ToLC, level by level
    firm.mark(state, "1", "yes"); firm.mark(state, "2", "no")                   # the client's marks
    for piece in firm.answer(state): print(piece, end="")                       # lawyer, streamed
    state.turns[-1].citations                                                   # checked statutes
    report = firm.close(state)                                                  # secretary + boss

Every step appends a :class:`~lawluo.firm.state.TraceEvent` to ``state.trace`` (agent, action, a
summary of what went in and came out, duration). A step whose model is missing or fails leaves the
state consistent and says why in the turn's ``note`` or the report; nothing the client typed or the
lawyer already wrote is dropped.

**Honest degradation.** A lawyer's answer that is empty, repeats LawLuo's prompt, has hardly any Chinese
for a Chinese question or was cut at ``max_tokens`` (:mod:`lawluo.agents.answer_check`) is held back:
the turn holds the extract from the databases (:func:`~lawluo.agents.lawyer.grounded_reply`), its
``held_back`` the reason and its ``note`` the message the client reads; the trace says why; the boss
does not score it. A streamed answer is checked when it is complete, so its pieces have already gone out
by then: whoever shows the stream redraws the turn from the state (the app does, replacing the streamed
text). The tree's trace line counts elements per actual source, with why the model was not used.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from datetime import UTC, date, datetime

from ..agents.answer_check import Held, reported_cut
from ..agents.boss import Boss
from ..agents.domains import OTHER, Domains
from ..agents.lawyer import (
    REPLY_HELD_BACK,
    Brief,
    Lawyer,
    grounded_reply,
    is_criminal_question,
    lookup_notices,
    retrieve_cases,
    retrieve_statutes,
)
from ..agents.receptionist import Receptionist
from ..agents.secretary import ReportInput, Secretary, load_examples
from ..i18n import Message, message
from ..law.checker import CitationChecker, as_of_day
from ..llm import Cancelled, Deadline, LanguageModels, LLMError, StreamInterrupted
from ..llm.budget import CallsSpent, within
from ..retrieval.statute_fit import annotate
from ..tolc import Tree, TreeBuilder, statement_key
from ..tolc.material import CRIMINAL, Issue
from .saved import MAX_ANSWER_CHARS, MAX_TRACE, MAX_TURN_CHARS, MAX_TURNS, Status
from .state import Consultation, TraceEvent, Turn

log = logging.getLogger(__name__)

STATUTES_K, CASES_K = 5, 3
NO_CLIENT = "（未填写）"  # the report's 咨询人 when the client gave no name
BEGAN_CHARS = 40  # of a held-back answer, the trace quotes this many characters (for the operator)


#: A turn's notes are kept as their Chinese text (a consultation is saved as JSON; the command line shows
#: them); the web page shows these in the visitor's language (``lawluo/ui/consult_render.note_html``).
STOPPED_NOTE = str(message("consult.note.stopped"))
#: A model's answer that broke off after some text (the error itself is in the trace and the log).
BROKE_OFF_NOTE = str(message("consult.note.broke_off"))


@dataclass(frozen=True)
class Retrieval:
    """What :meth:`Firm.retrieve` found for one question: the query it searched (the question and the
    confirmed facts), the lawyer's domain, the statutes and cases, and the notices on statutes it names."""

    query: str
    domain: str
    statutes: list[dict]
    cases: list[dict]
    notices: list[str]


class StepNotAllowed(ValueError):
    """A step asked of a consultation whose status does not accept it (the message says why).

    ``str()`` is the reason for a developer (English); ``.message`` the same for a visitor, a
    :class:`~lawluo.i18n.Message` the web page says in the visitor's language (None: the page shows
    ``str()``, marked English)."""

    def __init__(self, reason: str, said: Message | None = None) -> None:
        super().__init__(reason)
        self.message = said  # None: the page shows the reason as it is (English)


class ConsultationClosed(StepNotAllowed):
    """A step that needs an open consultation was asked of a closed one."""


OPEN = (Status.NEW, Status.CLARIFYING, Status.ANSWERED)


class ConsultationTooLong(ValueError):
    """One more question would take the consultation past what a saved consultation may hold (``.message``:
    what the visitor reads)."""

    def __init__(self, reason: str, said: Message | None = None) -> None:
        super().__init__(reason)
        self.message = said


@dataclass
class Firm:
    receptionist: Receptionist
    statute_searcher: object
    case_searcher: object
    checker: CitationChecker
    models: LanguageModels
    height: int = 3
    k: int = 3
    best_of: int = 1
    report_examples: tuple = ()  # the secretary's in-context examples (secretary.load_examples)
    material: object = None  # the clarification material (tolc.material.ClarificationMaterial) or None
    prompt_variant: str = "default"  # the settings' prompt_variant (lawluo.prompts.VARIANTS)

    def __post_init__(self) -> None:
        self.lawyer = Lawyer(self.models["lawyer"])
        self.secretary = Secretary(self.models["secretary"], self.report_examples, self.prompt_variant)
        self.boss = Boss(self.models["boss"])
        self.tree_builder = TreeBuilder(
            self._search_cases,
            self.models["clarifier"],
            self.height,
            self.k,
            material=self.material,
            prompt_variant=self.prompt_variant,
        )

    @classmethod
    def from_settings(cls, settings, models: LanguageModels | None = None, **services) -> Firm:
        """Load every service the firm needs from ``settings`` (pass any of them to reuse one already loaded)."""
        from ..law.database import StatuteDB
        from ..retrieval.cases import CaseSearcher
        from ..retrieval.model_assist import with_model_assist
        from ..retrieval.statutes import StatuteSearcher

        if "statute_searcher" not in services or "checker" not in services:
            db = StatuteDB(settings.statutes_path)
            services.setdefault("statute_searcher", StatuteSearcher.from_settings(settings, db))
            services.setdefault("checker", CitationChecker(db))
        if "case_searcher" not in services:  # (setdefault would load the case bank even when one is passed)
            services["case_searcher"] = CaseSearcher.from_settings(settings)
        if "material" not in services:
            from ..tolc.material import ClarificationMaterial

            services["material"] = ClarificationMaterial.from_settings(settings)
        if (
            "receptionist" not in services
        ):  # the plain statute search: its laws vote for a domain when trained to
            services["receptionist"] = Receptionist.load(settings, searcher=services["statute_searcher"])
        models = models or LanguageModels(settings.models)
        # The lawyer's statute retrieval, sharpened by a model when statute_assist_role names one.
        services["statute_searcher"] = with_model_assist(services["statute_searcher"], settings, models)
        return cls(
            models=models,
            height=settings.tolc_height,
            k=settings.tolc_k,
            best_of=settings.best_of,
            prompt_variant=settings.prompt_variant,
            report_examples=tuple(load_examples(settings.report_examples_dir)),
            **services,
        )

    @property
    def domains(self) -> Domains:
        """The domain table the firm serves: the receptionist's (the settings' ``domains_file``)."""
        return self.receptionist.table

    # -- the steps ----------------------------------------------------------------------------------
    def new(self, client: str = "") -> Consultation:
        return Consultation(client=" ".join(client.split())[:100])

    def receive(self, state: Consultation, text: str) -> dict:
        """Add the client's turn; route the first one, re-route later ones that clearly changed domain."""
        _require(state, OPEN, "asking")
        text = (text or "").strip()
        if not text:
            raise ValueError("the question is empty")
        if len(state.turns) + 2 > MAX_TURNS:  # a question and its answer must fit in a saved consultation
            raise ConsultationTooLong(
                f"this consultation already has {len(state.turns)} turns, the most one can hold; "
                "end it (the report sums it up) and start a new one",
                message("consult.firm.too_long", turns=len(state.turns)),
            )
        truncated = len(text) > MAX_TURN_CHARS
        text = text[:MAX_TURN_CHARS]
        state.turns.append(Turn("client", text))
        with self._step(state, "receptionist", "route") as event:
            if state.domain is None:
                routing = self.receptionist.classify(text)
                event.summary = _routing_summary(routing)
            else:
                routing = self.receptionist.reroute(state.client_turns[-2:], state.domain)
                event.summary = (
                    f"stays with {self.domains[state.domain].name}"
                    if routing is None
                    else f"根据新的问题改派：{self.domains[state.domain].name} → {_routing_summary(routing)}"
                )
                event.kind = "" if routing is None else "reroute"
            if truncated:
                event.summary += f" (question cut to {MAX_TURN_CHARS} characters)"
        if routing is not None:
            state.domain, state.routing = routing.domain, routing.as_dict()
        return state.routing

    def set_domain(self, state: Consultation, domain_id: str) -> None:
        """The client or lawyer overrides the receptionist."""
        _require(state, OPEN, "changing the domain")
        chosen = self.domains[domain_id]
        with self._step(state, "receptionist", "override") as event:
            event.summary, event.kind = f"咨询人改派为 {chosen.name}", "override"
        state.domain = chosen.id

    def set_facts_date(self, state: Consultation, value: str | date | None) -> str | None:
        """The date of the facts as the client gives it: the answers' citations are judged against the
        statute book of that day (``None`` or ``""``: today's). ``ValueError`` as :func:`facts_day`."""
        state.as_of = facts_day(value)
        return state.as_of

    def clarify(
        self,
        state: Consultation,
        height: int | None = None,
        k: int | None = None,
        deadline: Deadline | None = None,
        routed: bool = True,
        issue: str = "",
    ) -> Iterator[Tree]:
        """Build the clarification tree for the latest question; yields it after each level.

        ``height``/``k`` override the firm's tree size for this tree (the UI's settings panel). Within
        ``deadline`` a node whose model call does not finish in time gets elements from similar cases.
        ``routed=False``: the elements come from the consultation's domain as the client chose it, never
        from another domain (no soft routing, :meth:`~lawluo.tolc.material.ClarificationMaterial.domain_for`).
        ``issue``: the statute entry the client chose in the tree's 问题类型 menu (:meth:`reissue`).
        """
        _require(state, OPEN, "clarifying")
        if not state.client_turns:
            raise StepNotAllowed("the client has not asked anything yet", message("consult.firm.not_asked"))
        builder = self.tree_builder
        height, k = height or builder.height, k or builder.k
        if (height, k) != (builder.height, builder.k):
            builder = replace(builder, height=height, k=k)
        question = state.client_turns[-1]
        state.status = Status.CLARIFYING
        start = time.perf_counter()
        tree = None
        levels = builder.levels(
            question,
            self.domains[state.domain or OTHER],
            *(_routed(state) if routed else (None, ())),
            issue=issue,
        )
        while True:
            with within(deadline):  # activated per level: the budget must not span a yield
                tree_or_none = next(levels, None)
            if tree_or_none is None:
                break
            tree = state.tree = tree_or_none
            yield tree
        calls = sum(n.depth < tree.height - 1 for n in tree.nodes) if builder.uses_model else 0
        state.trace.append(
            TraceEvent(
                "clarifier",
                "build tree",
                f"H={tree.height} K={tree.k}: {tree.origin_summary()}"
                + (f"; {tree.failures} of {calls} model call(s) failed" if tree.failures else "")
                + (f"; {len(tree.notes)} note(s)" if tree.notes else ""),
                _ms(start),
                ok=tree.failures == 0,
                at=_now(),
            )
        )

    def reclarify(
        self, state: Consultation, domain_id: str, deadline: Deadline | None = None
    ) -> Iterator[Tree]:
        """Change the domain to ``domain_id`` (:meth:`set_domain`) while the tree awaits the client's marks,
        and build the latest question's tree again: elements of the chosen domain (never another's), the
        same height and width, and the marks of the elements still in it (matched by
        :func:`~lawluo.tolc.statement_key`, a parent's before its children's). Returns the rebuild, which
        yields the tree after each level.

        What :meth:`set_domain` refuses is raised here, before anything changes. If the rebuild fails, or is
        closed before it ends (the page left), the consultation is put back as it was — its domain, tree,
        marks and trace — before the error goes on."""
        _require(state, (Status.CLARIFYING,), "rebuilding the clarification tree")
        if state.tree is None:
            raise StepNotAllowed("there is no clarification tree to rebuild", message("consult.firm.no_tree"))
        before = (state.domain, state.tree, len(state.trace))
        self.set_domain(state, domain_id)
        return self._rebuild(state, before, deadline)

    def issue_menu(self, state: Consultation) -> tuple[list[Issue], str]:
        """The tree's 问题类型 menu while it awaits the client's marks, and the id of the issue its first level
        comes from (the client's choice, else the issue of its first material element; ``""`` for a tree of a
        model's or a case's elements). The issues (statute entries) are those of the domain the tree draws
        on, then of the consultation's domain (they differ after soft routing), then of the receptionist's
        other top three domains — each domain's best matches first
        (:meth:`~lawluo.tolc.material.ClarificationMaterial.issues`); criminal issues only for a
        criminal consultation. ``([], "")`` when there is nothing to choose from."""
        tree, material = state.tree, self.material
        if tree is None or material is None or state.status != Status.CLARIFYING:
            return [], ""
        current = material.issue(tree.issue) or next(
            (found for n in tree.level(1) if (found := material.issue_of(n.statement))), None
        )
        domain = state.domain or OTHER
        drawn = [current.domain] if current is not None and domain != OTHER else []
        # criminal issues for a criminal consultation, or a tree drawn from criminal material
        criminal = CRIMINAL in (domain, *drawn)
        issues: list[Issue] = []
        for d in dict.fromkeys([*drawn, domain, *([] if domain == OTHER else _top_domains(state))]):
            if (d == OTHER or material.covers(d)) and (d != CRIMINAL or criminal):
                issues += [i for i in material.issues(tree.question, d) if i not in issues]
        if current is not None and current not in issues:
            issues.insert(0, current)
        return issues, current.id if current is not None else ""

    def reissue(self, state: Consultation, issue_id: str, deadline: Deadline | None = None) -> Iterator[Tree]:
        """The client chose ``issue_id`` in the tree's 问题类型 menu (:meth:`issue_menu`) while the tree awaits
        marks: the tree is built again with that issue's elements first, the same height and width, and
        the marks of the elements still in it kept, as :meth:`reclarify` does; an issue of another domain
        than the consultation's makes that domain the consultation's (an override, traced). An issue the menu does not
        offer is refused (``ValueError``) before anything changes; a failed or abandoned rebuild puts the
        consultation back as it was."""
        _require(state, (Status.CLARIFYING,), "choosing the issue")
        if state.tree is None:
            raise StepNotAllowed("there is no clarification tree to rebuild", message("consult.firm.no_tree"))
        issues, _ = self.issue_menu(state)
        chosen = next((i for i in issues if i.id == issue_id), None)
        if chosen is None:
            raise ValueError(f"{str(issue_id)[:60]!r} is not an issue of this consultation's menu")
        before = (state.domain, state.tree, len(state.trace))
        state.trace.append(TraceEvent("client", "issue", f"{chosen.id} ({chosen.title})", 0.0, at=_now()))
        # an issue of another domain is that domain's matter: its lawyer answers
        if chosen.domain != state.domain:
            self.set_domain(state, chosen.domain)
        return self._rebuild(state, before, deadline, chosen.id)

    def _rebuild(
        self,
        state: Consultation,
        before: tuple[str | None, Tree, int],
        deadline: Deadline | None,
        issue: str = "",
    ) -> Iterator[Tree]:
        domain, old, traced = before
        marks = {statement_key(n.statement): n.mark for n in old.visible() if n.mark != "unknown"}
        try:
            yield from self.clarify(state, old.height, old.k, deadline, routed=False, issue=issue)
        except BaseException:
            state.domain, state.tree, state.status = domain, old, Status.CLARIFYING
            del state.trace[traced:]
            raise
        tree, kept = state.tree, 0
        for node in tree.elements:  # in the order they were added: a parent before its children
            value = marks.get(statement_key(node.statement))
            if value is not None and not tree.pruned(node.id):
                tree.mark(node.id, value)
                kept += 1
        state.trace.append(TraceEvent("client", "marks kept", f"{kept} of {len(marks)}", 0.0, at=_now()))

    def mark(self, state: Consultation, node_id: str, value: str) -> None:
        """The client marks an element of the tree out for clarification (not one already answered)."""
        if state.tree is None:
            raise StepNotAllowed("there is no clarification tree to mark", message("consult.firm.no_tree"))
        _require(state, (Status.CLARIFYING,), "marking the tree")
        state.tree.mark(node_id, value)
        if len(state.trace) >= MAX_TRACE - 100:  # endless clicking: forget the oldest mark, keep the rest
            oldest = next((e for e in state.trace if e.agent == "client" and e.action == "mark"), None)
            if oldest is not None:
                state.trace.remove(oldest)
        state.trace.append(TraceEvent("client", "mark", f"{node_id} = {value}", 0.0, at=_now()))

    def retrieve(self, state: Consultation) -> Retrieval:
        """The statutes, cases and notices for the latest question and the facts confirmed so far (the
        retrieval step of :meth:`answer`, traced). A batch prepares it ahead of the model call and hands it
        to :meth:`answer`, so the CPU work of the next questions runs while answers stream."""
        query, domain = self._retrieval_key(state)
        lawyer_domain = self.domains[domain]
        with self._step(state, "retrieval", "statutes and cases") as event:
            statutes = retrieve_statutes(self.statute_searcher, lawyer_domain, query, STATUTES_K)
            confirmed = self._confirmed_statutes(state)
            if confirmed:
                named = {(s["law"], s["article_label"]) for s in confirmed}
                rest = [s for s in statutes if (s["law"], s["article_label"]) not in named]
                statutes = (confirmed + rest)[:STATUTES_K]
            question = state.client_turns[-1]
            statutes = annotate(
                statutes,
                question,
                is_criminal_question(question, domain),
                getattr(self.statute_searcher, "colloquial", None),
            )
            cases = retrieve_cases(self.case_searcher, lawyer_domain, query, CASES_K, self._criminal_name())
            event.summary = (
                f"{len(statutes)} statutes ({len(confirmed)} of the confirmed elements), "
                f"{len(cases)} cases for {len(query)} characters"
            )
        notices = lookup_notices(self.statute_searcher, state.client_turns[-1])
        return Retrieval(query, domain, statutes, cases, notices)

    def _confirmed_statutes(self, state: Consultation) -> list[dict]:
        """The articles whose conditions the client confirmed in the tree: each confirmed element written
        from a statute entry (:meth:`~lawluo.tolc.material.ClarificationMaterial.statute_refs`) brings its
        entry's first article, looked up by law and number. The search alone can miss it — a wrong
        transfer's 不当得利 (民法典 985) shares no word with 转错账 — and the client's yes is the firmest sign
        that the article applies."""
        cited = getattr(self.statute_searcher, "cited", None)  # a searcher of a test may not look up
        if self.material is None or cited is None or not state.confirmed:
            return []
        hits = (cited(cite) for cite in self.material.statute_refs(state.confirmed))
        return [{**hit.as_dict(), "preferred": True, "confirmed": True} for hit in hits if hit is not None]

    def _sources(self, facts: list[str]) -> dict[str, str]:
        """Each marked fact written from a statute entry → that entry's first article, as a citation
        (:meth:`~lawluo.tolc.material.ClarificationMaterial.source`): the answer without a model says which
        quoted article a fact belongs to by where the fact came from, not only by the words they share."""
        if self.material is None:
            return {}
        return {fact: cite for fact in facts if (cite := self.material.source(fact)) is not None}

    def _retrieval_key(self, state: Consultation) -> tuple[str, str]:
        """What a retrieval depends on: its query (the latest question and the facts confirmed so far) and
        the lawyer's domain."""
        return " ".join([state.client_turns[-1], *state.confirmed]), self.domains[state.domain or OTHER].id

    def answer(
        self, state: Consultation, deadline: Deadline | None = None, retrieval: Retrieval | None = None
    ) -> Iterator[str]:
        """The lawyer's answer to the latest question, streamed; the turn is stored when it ends.

        Within ``deadline`` the answer stops when the budget runs out (what was written is kept, with a
        note). An answer that fails the check of :mod:`~lawluo.agents.answer_check` (empty, an echo of the
        prompt, not Chinese, cut) is held back: the stored turn holds the extract from the databases, the
        reason (``held_back``) and a note; the pieces already yielded were the model's, so a caller that
        shows the stream redraws the turn from ``state.turns[-1]``. A step the state does not accept raises
        at the call, before any piece (the UI refuses it without showing an answer begin). ``retrieval``,
        from :meth:`retrieve` on this state, is used when it is still for the same question, domain and facts.
        """
        _require(state, OPEN, "answering")
        if not state.client_turns or state.turns[-1].role != "client":
            raise StepNotAllowed(
                "the latest turn is not a client question", message("consult.firm.not_a_question")
            )
        return self._answer(state, deadline, retrieval)

    def _criminal_name(self) -> str | None:
        """The criminal domain's name (what its cases carry as ``domain_hint``), if the table has one."""
        return self.domains[CRIMINAL].name if CRIMINAL in self.domains else None

    def _answer(
        self, state: Consultation, deadline: Deadline | None, retrieval: Retrieval | None
    ) -> Iterator[str]:
        question = state.client_turns[-1]
        lawyer_domain = self.domains[state.domain or OTHER]
        if retrieval is None or (retrieval.query, retrieval.domain) != self._retrieval_key(state):
            retrieval = self.retrieve(state)
        statutes, cases = retrieval.statutes, retrieval.cases
        turn = Turn("lawyer", "", statutes=statutes, cases=cases)
        history = [(t.role, t.text) for t in state.turns[:-1]]
        brief = Brief(
            lawyer_domain,
            question,
            history,
            state.confirmed,
            state.denied,
            statutes,
            cases,
            retrieval.notices,
            self._sources([*state.confirmed, *state.denied]),
        )
        try:
            if not self.lawyer.available:  # an extract of the statutes and cases, checked like any answer
                with self._step(state, "lawyer", "answer") as event:
                    turn.text = grounded_reply(brief)
                    event.summary = (
                        f"no model: extractive answer of {len(turn.text)} characters "
                        f"from {len(statutes)} statutes and {len(cases)} cases"
                    )
                yield turn.text
            elif self.best_of > 1 and self.boss.available:
                yield from self._best_of(state, brief, turn, deadline)
            else:
                yield from self._stream(state, brief, turn, deadline)
        finally:
            self._finish_answer(state, question, turn, deadline)

    def regenerate(self, state: Consultation, deadline: Deadline | None = None) -> Iterator[str]:
        """Drop the latest answer and answer the same question again (streamed; refused at the call)."""
        _require(state, (Status.ANSWERED,), "regenerating")
        if not state.turns or state.turns[-1].role != "lawyer":
            raise StepNotAllowed("there is no answer to regenerate", message("consult.firm.no_answer"))
        return self._regenerate(state, deadline)

    def _regenerate(self, state: Consultation, deadline: Deadline | None) -> Iterator[str]:
        dropped = state.turns.pop()
        state.trace.append(
            TraceEvent(
                "lawyer", "regenerate", f"dropped an answer of {len(dropped.text)} characters", 0.0, at=_now()
            )
        )
        yield from self.answer(state, deadline)

    def close(self, state: Consultation, deadline: Deadline | None = None, client: str | None = None) -> dict:
        """The secretary's nine-section report, scored by the boss; the consultation is closed.

        ``client`` names the client in the report (the consultation's name is kept when it is ``None``).
        Within ``deadline`` a secretary that does not answer in time gives the partial report.
        """
        _require(state, OPEN, "closing")
        if not state.client_turns:
            raise StepNotAllowed(
                "there is nothing to report: the client has not asked anything",
                message("consult.firm.not_asked"),
            )
        if client is not None:
            state.client = " ".join(client.split())[:100]
        # every statute cited, once per verdict: (statute, verdict) → (the article matched, its real text)
        cited: dict[tuple[str, str], tuple[str, str]] = {}
        for c in (c for t in state.turns for c in t.citations if c.get("law") and c.get("article_label")):
            m = c.get("matched") or {}
            article = f"《{m['law']}》{m['article_label']}" if m.get("law") else ""
            cited.setdefault(
                (f"《{c['law']}》{c['article_label']}", c["verdict"]), (article, m.get("text", ""))
            )
        request = ReportInput(
            client=state.client or NO_CLIENT,
            domain_name=self.domains[state.domain or OTHER].name,
            turns=[(t.role, t.text) for t in state.turns],
            confirmed=state.confirmed,
            denied=state.denied,
            statutes=list(cited),
            matched=list(cited.values()),
            number=f"LL-{date.today():%Y%m%d}-{state.id[:6].upper()}",
            date=f"{date.today():%Y年%m月%d日}",
        )
        with self._step(state, "secretary", "write report") as event, within(deadline):
            report = self.secretary.write(request)
            event.summary = f"report {report.number} by {report.generated_by}"
            if report.notice and self.models["secretary"].available:  # the model failed: a partial report
                event.ok, event.summary = False, f"{event.summary}, partial: {report.notice[:300]}"
        state.report = report.model_dump()
        if self.boss.available:
            from ..agents.secretary import render_markdown

            with self._step(state, "boss", "score report") as event, within(deadline):
                try:
                    score = self.boss.score_report(state.first_question, render_markdown(report))
                    state.report_score = asdict(score)
                    event.summary = f"P(better) = {score.p_better:.2f}"
                except LLMError as exc:
                    event.ok, event.summary = False, f"not scored: {exc}"
        state.status = Status.CLOSED
        return state.report

    # -- internals ----------------------------------------------------------------------------------
    def _search_cases(self, query: str, k: int) -> list:
        return [hit.case for hit in self.case_searcher.search(query, k)]

    def _stream(
        self, state: Consultation, brief: Brief, turn: Turn, deadline: Deadline | None = None
    ) -> Iterator[str]:
        start = time.perf_counter()
        pieces, cut, error, spent = None, None, "", ""
        try:
            with within(deadline):
                pieces = self.lawyer.stream(brief)
            while True:
                with within(deadline):  # per piece: the budget must not span a yield
                    if deadline is not None:
                        deadline.check()
                    piece = next(pieces, None)
                if piece is None:
                    break
                cut = reported_cut(piece) or cut
                turn.text += piece
                yield piece
            cut = reported_cut(pieces) or cut
        except StreamInterrupted as exc:
            error, turn.note = f"{type(exc).__name__}: {exc}", BROKE_OFF_NOTE
        except Cancelled as exc:  # the visitor left or started over: what was written is kept, marked
            turn.note = str(message("consult.note.cancelled", reason=str(exc)))
        except GeneratorExit:  # the caller closed the answer mid-stream (a page gone, a new consultation)
            turn.note = turn.note or STOPPED_NOTE
            raise
        except LLMError as exc:
            cut = reported_cut(exc) or cut
            error, turn.note = f"{type(exc).__name__}: {exc}", BROKE_OFF_NOTE
            spent = str(exc) if isinstance(exc, CallsSpent) else ""  # its message is written for the visitor
        finally:
            if pieces is not None:
                pieces.close()  # a stream stopped early releases its connection and its slot now
        summary = f"{len(turn.text)} characters streamed" + (f"; {error or turn.note}" if turn.note else "")
        if error:  # the visitor reads plain words (the note); the error goes to the trace and the log
            log.warning("lawyer: the model's answer failed after %d characters: %s", len(turn.text), error)
        # Any text, whole or partial, is checked; a call that failed before writing a word gives the extract.
        if turn.text.strip() or not turn.note:
            held = self.lawyer.held_back(brief, turn.text, cut)
        else:
            held = Held("no_answer", error, told=spent) if error else None
        if held is not None:
            summary = f"{summary}; {self._hold(turn, brief, held)}"
        state.trace.append(TraceEvent("lawyer", "answer", summary, _ms(start), ok=not turn.note, at=_now()))

    @staticmethod
    def _hold(turn: Turn, brief: Brief, held: Held) -> str:
        """Hold ``turn``'s answer back for ``held``'s reason: the extract in its place, the reason and the
        message recorded; returns the trace's words for it (with the answer's first characters)."""
        began = " ".join(turn.text.split())[:BEGAN_CHARS]
        turn.text = grounded_reply(brief, REPLY_HELD_BACK)
        turn.held_back, turn.note, turn.score = held.reason, held.message(), None
        quoted = f"; it began {began!r}" if began else ""
        return f"{held.summary()}{quoted}; shown instead: extractive answer of {len(turn.text)} characters"

    def _best_of(
        self, state: Consultation, brief: Brief, turn: Turn, deadline: Deadline | None = None
    ) -> Iterator[str]:
        start = time.perf_counter()
        try:
            with within(deadline):
                drafts = self.lawyer.answers(brief, self.best_of)
        except LLMError as exc:
            log.warning("lawyer: the model gave no draft: %s", exc)
            hold = self._hold(turn, brief, Held("no_answer", str(exc)))
            summary = f"no draft: {type(exc).__name__}: {exc}; {hold}"
            state.trace.append(TraceEvent("lawyer", "answer", summary, _ms(start), ok=False, at=_now()))
            return
        # every draft passes the same check as a streamed answer; the boss sees only those that pass
        checks = [self.lawyer.held_back(brief, d, reported_cut(d)) for d in drafts]
        answers = [d for d, held in zip(drafts, checks, strict=True) if held is None]
        reasons = Counter(held.reason for held in checks if held is not None)
        count = ", ".join(f"{reason} {n}" for reason, n in reasons.most_common())
        if not answers:  # the most frequent reason (the first draft's among equals) is the one given
            top = next(h for h in checks if h is not None and h.reason == reasons.most_common(1)[0][0])
            summary = f"{len(drafts)} drafts, all held back ({count}); " + self._hold(turn, brief, top)
            state.trace.append(TraceEvent("lawyer", "answer", summary, _ms(start), ok=False, at=_now()))
            yield turn.text
            return
        summary = f"{len(answers)} drafts" + (
            f" ({len(drafts) - len(answers)} held back: {count})" if count else ""
        )
        state.trace.append(TraceEvent("lawyer", "answer", summary, _ms(start), at=_now()))
        with self._step(state, "boss", "best of n") as event, within(deadline):
            try:
                best, scores = self.boss.best_of(brief.question, answers)
            except LLMError as exc:
                best, scores = 0, []
                event.ok, event.summary = False, f"not scored, kept the first draft: {exc}"
            else:
                event.summary = (
                    "P(better) " + ", ".join(f"{s.p_better:.2f}" for s in scores) + f" → draft {best + 1}"
                )
        turn.text = answers[best]
        if scores:
            turn.score = asdict(scores[best])
        yield turn.text

    def _finish_answer(
        self, state: Consultation, question: str, turn: Turn, deadline: Deadline | None = None
    ) -> None:
        """Check the answer's citations and have the boss score it; store the turn whatever happened."""
        turn.text = turn.text[:MAX_ANSWER_CHARS]  # a runaway model: kept within what a saved file may hold
        if turn.text:
            with self._step(state, "checker", "check citations") as event:
                as_of = state.as_of or date.today().isoformat()  # the client's date of the facts, or today
                result = self.checker.check(turn.text, as_of=as_of)
                turn.citations = [c.as_dict() for c in result.citations]
                turn.nhsr = result.nhsr
                event.summary = f"{len(turn.citations)} citations as of {as_of}, NHSR {turn.nhsr}"
            # the boss scores a lawyer's answer, not the extract given without a lawyer model or in place
            # of an answer held back
            scored = self.lawyer.available and not turn.note and not turn.held_back
            if turn.score is None and self.boss.available and scored:
                with self._step(state, "boss", "score answer") as event, within(deadline):
                    try:
                        score = self.boss.score(question, turn.text)
                        turn.score = asdict(score)
                        event.summary = f"P(better) = {score.p_better:.2f}"
                    except LLMError as exc:
                        event.ok, event.summary = False, f"not scored: {exc}"
        state.turns.append(turn)
        if state.status != Status.CLOSED:  # a consultation closed meanwhile stays closed
            state.status = Status.ANSWERED

    @contextmanager
    def _step(self, state: Consultation, agent: str, action: str) -> Iterator[TraceEvent]:
        event = TraceEvent(agent, action, "", 0.0, at=_now())
        start = time.perf_counter()
        try:
            yield event
        except Exception as exc:
            event.ok = False
            event.summary = event.summary or f"{type(exc).__name__}: {exc}"
            raise
        finally:
            event.duration_ms = _ms(start)
            state.trace.append(event)


def _require(state: Consultation, allowed: tuple[Status, ...], step: str) -> None:
    """Raise the typed error of a step that ``state``'s status does not accept."""
    if state.status in allowed:
        return
    if state.status == Status.CLOSED:
        raise ConsultationClosed(
            "this consultation is closed; start a new one", message("consult.firm.closed")
        )
    status = Status(state.status).value
    raise StepNotAllowed(
        f"{step} is not possible now: the consultation is {status}"
        + ("; ask a new question to get a new clarification tree" if step == "marking the tree" else ""),
        message(
            "consult.firm.not_now_mark" if step == "marking the tree" else "consult.firm.not_now",
            status=message(f"consult.firm.status.{status}"),
        ),
    )


def _top_domains(state: Consultation) -> tuple[str, ...]:
    """The receptionist's top three domains for the consultation (a saved routing's values are checked by
    the caller: only domains the material covers are used)."""
    routing = state.routing if isinstance(state.routing, dict) else {}
    top = routing.get("top")
    return tuple(
        row["domain"]
        for row in (top if isinstance(top, list) else [])[:3]
        if isinstance(row, dict) and isinstance(row.get("domain"), str)
    )


def _routed(state: Consultation) -> tuple[float | None, tuple[str, ...]]:
    """The receptionist's confidence in the consultation's domain and its top domains, for the tree's
    soft routing; ``(None, ())`` when the client chose the domain (an override) or the saved routing
    holds no usable number (a saved value is never trusted as it is)."""
    routing = state.routing if isinstance(state.routing, dict) else {}
    confidence = routing.get("confidence")
    if routing.get("domain") != state.domain or isinstance(confidence, bool):
        return None, ()
    if not isinstance(confidence, int | float) or not 0.0 <= confidence <= 1.0:
        return None, ()
    near = _top_domains(state)
    return float(confidence), near


def _routing_summary(routing) -> str:
    top = ", ".join(f"{name} {p:.2f}" for _, name, p in routing.top)
    return f"{routing.name} ({top})" + (" — low confidence, 其他" if routing.fallback else "")


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def facts_day(value: str | date | None) -> str | None:
    """A date of the facts as an ISO day, ``None`` for none; ``ValueError`` naming the accepted form for
    anything that is not a date, or a date after today."""
    day = as_of_day(value)
    if day is not None and day > date.today().isoformat():
        raise ValueError(f"the date of the facts {day} is after today")
    return day
