"""The firm's standard operating procedure: the only place that orders the agents (LawLuo paper §3.2).

    firm = Firm.from_settings(load_settings())
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

**The firm decides, the page shows.** Which step a consultation accepts is the firm's to say: a step it
does not accept raises :class:`~lawluo.firm.rules.StepNotAllowed`, and :meth:`Firm.allowed` tells whoever
shows the consultation what each control may do now; what a choice of domain does (the tree built again,
the domain set for the next answers, or nothing) is :meth:`Firm.change_domain`'s to decide.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from datetime import date

from ..agents.boss import Boss
from ..agents.lawyer import Brief, Lawyer, grounded_reply
from ..agents.receptionist import Receptionist
from ..agents.secretary import ReportInput, Secretary, cited_statutes, load_examples
from ..domains import OTHER, Domains
from ..i18n import message
from ..law.checker import CitationChecker
from ..llm import Deadline, LanguageModels, LLMError
from ..llm.budget import within
from ..retrieval.base import CaseSearch, StatuteSearch
from ..tolc import Tree, TreeBuilder, statement_key
from ..tolc.material import Issue
from .answering import BEGAN_CHARS, BROKE_OFF_NOTE, STOPPED_NOTE, best_of, finish_answer, stream
from .retrieval import CASES_K, STATUTES_K, Retrieval, retrieval_key, retrieve, sources
from .rules import (
    OPEN,
    Allowed,
    ConsultationClosed,
    ConsultationTooLong,
    StepNotAllowed,
    allowed,
    facts_day,
    require,
)
from .saved import MAX_TRACE, MAX_TURN_CHARS, MAX_TURNS, Status
from .state import Consultation, TraceEvent, Turn
from .tracing import ms, now, traced

log = logging.getLogger(__name__)

NO_CLIENT = "（未填写）"  # the report's 咨询人 when the client gave no name
#: What other modules import from here: the steps' refusals (:mod:`.rules`) and the notes of an answer
#: (:mod:`.answering`).
__all__ = [
    "BEGAN_CHARS",
    "BROKE_OFF_NOTE",
    "CASES_K",
    "NO_CLIENT",
    "OPEN",
    "STATUTES_K",
    "STOPPED_NOTE",
    "Allowed",
    "ConsultationClosed",
    "ConsultationTooLong",
    "Firm",
    "Retrieval",
    "StepNotAllowed",
    "facts_day",
]


@dataclass
class Firm:
    receptionist: Receptionist
    statute_searcher: StatuteSearch
    case_searcher: CaseSearch
    checker: CitationChecker
    models: LanguageModels
    height: int = 3
    k: int = 3
    best_of: int = 1
    #: Times a lawyer's answer cut at max_tokens is asked to finish (the setting lawyer_continuations).
    continuations: int = 1
    report_examples: tuple = ()  # the secretary's in-context examples (secretary.load_examples)
    material: object = None  # the clarification material (tolc.material.ClarificationMaterial) or None
    prompt_variant: str = "default"  # the settings' prompt_variant (lawluo.prompts.VARIANTS)
    #: The kind of case a question is about, read from labelled questions (retrieval.case_kind.CaseKinds) or None.
    case_kinds: object = None

    def __post_init__(self) -> None:
        self.lawyer = Lawyer(self.models["lawyer"], self.continuations)
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
        if "case_kinds" not in services:  # over the plain searcher's dense index (the question embedded once)
            from ..retrieval.case_kind import CaseKinds

            dense = getattr(services["statute_searcher"], "dense", None)
            services["case_kinds"] = CaseKinds.from_settings(settings, dense)
        models = models or LanguageModels(settings.models)
        # The lawyer's statute retrieval, sharpened by a model when statute_assist_role names one.
        services["statute_searcher"] = with_model_assist(services["statute_searcher"], settings, models)
        return cls(
            models=models,
            height=settings.tolc_height,
            k=settings.tolc_k,
            best_of=settings.best_of,
            continuations=settings.lawyer_continuations,
            prompt_variant=settings.prompt_variant,
            report_examples=tuple(load_examples(settings.report_examples_dir)),
            **services,
        )

    @property
    def domains(self) -> Domains:
        """The domain table the firm serves: the receptionist's (the settings' ``domains_file``)."""
        return self.receptionist.table

    # -- what the page shows ------------------------------------------------------------------------
    @property
    def routing_notice(self) -> str:
        """The receptionist's notice about domains of the table its model does not know ("" for none)."""
        return self.receptionist.notice

    @property
    def clarifier_available(self) -> bool:
        """Whether a clarifier model proposes the tree's elements (a tree read off the material or similar
        cases costs no model call)."""
        return self.tree_builder.uses_model

    def case(self, case_id: str):
        """The case bank's case ``case_id`` (a tree element's supporting case), or ``None``."""
        return self.case_searcher.get(case_id)

    def issue_title(self, issue_id: str) -> str:
        """The title of the material's issue ``issue_id`` (an entry of the tree's 问题类型 menu)."""
        return self.material.issue(issue_id).title

    def allowed(self, state: Consultation | None) -> Allowed:
        """What each control of the page may do for ``state`` now (:func:`.rules.allowed`)."""
        return allowed(state)

    def rebuilds(self, state: Consultation, domain_id: str | None) -> bool:
        """Whether choosing ``domain_id`` builds the tree again (:meth:`change_domain`): while the tree
        awaits the client's marks, for another domain than the consultation's, or for its own when the
        tree's elements were drawn from another (soft routing: :attr:`~lawluo.tolc.tree.Tree.drawn_from`)."""
        tree = state.tree if self.allowed(state).mark else None
        return bool(domain_id) and tree is not None and (domain_id != state.domain or bool(tree.drawn_from))

    def change_domain(
        self, state: Consultation, domain_id: str | None, deadline: Deadline | None = None
    ) -> Iterator[Tree] | None:
        """The client's choice of ``domain_id`` in the domain menu. When it :meth:`rebuilds` the tree: the
        rebuild (:meth:`reclarify`, yielding the tree after each level). Otherwise ``None`` when nothing
        changes (no choice, or the consultation's domain), else the domain set now (:meth:`set_domain`, for
        the next answers) and an empty rebuild. What :meth:`set_domain` refuses is raised at the call."""
        if self.rebuilds(state, domain_id):
            return self.reclarify(state, domain_id, deadline)
        if not domain_id or domain_id == state.domain:
            return None
        self.set_domain(state, domain_id)
        return iter(())

    # -- the steps ----------------------------------------------------------------------------------
    def new(self, client: str = "") -> Consultation:
        return Consultation(client=" ".join(client.split())[:100])

    def receive(self, state: Consultation, text: str) -> dict:
        """Add the client's turn; route the first one, re-route later ones that clearly changed domain."""
        require(state, OPEN, "asking")
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
        with traced(state, "receptionist", "route") as event:
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
        require(state, OPEN, "changing the domain")
        chosen = self.domains[domain_id]
        with traced(state, "receptionist", "override") as event:
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
        require(state, OPEN, "clarifying")
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
        calls = tree.calls if builder.uses_model else 0
        state.trace.append(
            TraceEvent(
                "clarifier",
                "build tree",
                f"H={tree.height} K={tree.k}: {tree.origin_summary()}"
                + (f"; {tree.failures} of {calls} model call(s) failed" if tree.failures else "")
                + (f"; {len(tree.notes)} note(s)" if tree.notes else ""),
                ms(start),
                ok=tree.failures == 0,
                at=now(),
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
        require(state, (Status.CLARIFYING,), "rebuilding the clarification tree")
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
        (:meth:`~lawluo.tolc.material.ClarificationMaterial.issues`); a guarded domain's issues (criminal:
        ``guarded_by`` in the domain table) only for its own consultation or a tree drawn from it. ``([], "")`` when there is nothing to choose from."""
        tree, material = state.tree, self.material
        if tree is None or material is None or state.status != Status.CLARIFYING:
            return [], ""
        current = material.issue(tree.issue) or next(
            (found for n in tree.level(1) if (found := material.issue_of(n.statement))), None
        )
        domain = state.domain or OTHER
        drawn = [current.domain] if current is not None and domain != OTHER else []
        guarded = {d.id for d in self.domains.guarded} - {domain, *drawn}  # none of their issues here
        issues: list[Issue] = []
        for d in dict.fromkeys([*drawn, domain, *([] if domain == OTHER else _top_domains(state))]):
            if (d == OTHER or material.covers(d)) and d not in guarded:
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
        require(state, (Status.CLARIFYING,), "choosing the issue")
        if state.tree is None:
            raise StepNotAllowed("there is no clarification tree to rebuild", message("consult.firm.no_tree"))
        issues, _ = self.issue_menu(state)
        chosen = next((i for i in issues if i.id == issue_id), None)
        if chosen is None:
            raise ValueError(f"{str(issue_id)[:60]!r} is not an issue of this consultation's menu")
        before = (state.domain, state.tree, len(state.trace))
        state.trace.append(TraceEvent("client", "issue", f"{chosen.id} ({chosen.title})", 0.0, at=now()))
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
        state.trace.append(TraceEvent("client", "marks kept", f"{kept} of {len(marks)}", 0.0, at=now()))

    def mark(self, state: Consultation, node_id: str, value: str) -> None:
        """The client marks an element of the tree out for clarification (not one already answered)."""
        if state.tree is None:
            raise StepNotAllowed("there is no clarification tree to mark", message("consult.firm.no_tree"))
        require(state, (Status.CLARIFYING,), "marking the tree")
        state.tree.mark(node_id, value)
        if len(state.trace) >= MAX_TRACE - 100:  # endless clicking: forget the oldest mark, keep the rest
            oldest = next((e for e in state.trace if e.agent == "client" and e.action == "mark"), None)
            if oldest is not None:
                state.trace.remove(oldest)
        state.trace.append(TraceEvent("client", "mark", f"{node_id} = {value}", 0.0, at=now()))

    def retrieve(self, state: Consultation) -> Retrieval:
        """The statutes, cases and notices for the latest question and the facts confirmed so far (the
        retrieval step of :meth:`answer`, traced): :func:`.retrieval.retrieve`."""
        return retrieve(self, state)

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
        require(state, OPEN, "answering")
        if not state.client_turns or state.turns[-1].role != "client":
            raise StepNotAllowed(
                "the latest turn is not a client question", message("consult.firm.not_a_question")
            )
        return self._answer(state, deadline, retrieval)

    def _answer(
        self, state: Consultation, deadline: Deadline | None, retrieval: Retrieval | None
    ) -> Iterator[str]:
        question = state.client_turns[-1]
        lawyer_domain = self.domains[state.domain or OTHER]
        if retrieval is None or (retrieval.query, retrieval.domain) != retrieval_key(self, state):
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
            sources(self, [*state.confirmed, *state.denied]),
        )
        try:
            if not self.lawyer.available:  # an extract of the statutes and cases, checked like any answer
                with traced(state, "lawyer", "answer") as event:
                    turn.text = grounded_reply(brief)
                    event.summary = (
                        f"no model: extractive answer of {len(turn.text)} characters "
                        f"from {len(statutes)} statutes and {len(cases)} cases"
                    )
                yield turn.text
            elif self.best_of > 1 and self.boss.available:
                yield from best_of(self, state, brief, turn, deadline)
            else:
                yield from stream(self, state, brief, turn, deadline)
        finally:
            finish_answer(self, state, question, turn, deadline)

    def regenerate(self, state: Consultation, deadline: Deadline | None = None) -> Iterator[str]:
        """Drop the latest answer and answer the same question again (streamed; refused at the call)."""
        require(state, (Status.ANSWERED,), "regenerating")
        if not state.turns or state.turns[-1].role != "lawyer":
            raise StepNotAllowed("there is no answer to regenerate", message("consult.firm.no_answer"))
        return self._regenerate(state, deadline)

    def _regenerate(self, state: Consultation, deadline: Deadline | None) -> Iterator[str]:
        dropped = state.turns.pop()
        state.trace.append(
            TraceEvent(
                "lawyer", "regenerate", f"dropped an answer of {len(dropped.text)} characters", 0.0, at=now()
            )
        )
        yield from self.answer(state, deadline)

    def close(self, state: Consultation, deadline: Deadline | None = None, client: str | None = None) -> dict:
        """The secretary's nine-section report, scored by the boss; the consultation is closed.

        ``client`` names the client in the report (the consultation's name is kept when it is ``None``).
        Within ``deadline`` a secretary that does not answer in time gives the partial report.
        """
        require(state, OPEN, "closing")
        if not state.client_turns:
            raise StepNotAllowed(
                "there is nothing to report: the client has not asked anything",
                message("consult.firm.not_asked"),
            )
        if client is not None:
            state.client = " ".join(client.split())[:100]
        # every statute cited, once per verdict: (statute, verdict) → (the article matched, its real text)
        cited = cited_statutes(c for t in state.turns for c in t.citations)
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
        with traced(state, "secretary", "write report") as event, within(deadline):
            report = self.secretary.write(request)
            event.summary = f"report {report.number} by {report.generated_by}"
            if report.notice and self.models["secretary"].available:  # the model failed: a partial report
                event.ok, event.summary = False, f"{event.summary}, partial: {report.notice[:300]}"
        state.report = report.model_dump()
        if self.boss.available:
            from ..agents.secretary import render_markdown

            with traced(state, "boss", "score report") as event, within(deadline):
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
