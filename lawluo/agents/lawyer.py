"""The lawyer: one legal LLM, specialised per domain by its role-enhancement prompt (LawLuo paper §3.2).

Its input for one answer (:class:`Brief`) is the conversation so far, the facts the client confirmed or
denied in the clarification tree, and the statutes retrieved for them; the role prompt comes from the
domain's row in the domain table (``domains.yaml``: its own template, or the generic one filled with
the domain's name and laws). The statutes are retrieved with the domain's preferred laws favoured
(:func:`retrieve_statutes`). Checking the statutes the answer cites is the firm's next step, not the
lawyer's.

**Without a model** the lawyer still answers, in Chinese, with what the databases hold
(:func:`grounded_reply`): the statutes retrieved for the question and the confirmed facts, quoted from the
database; each fact the client marked, linked to the quoted statutes it shares words with (and the words
it shares); the similar cases of the question's kind (:func:`retrieve_cases`) with their outcomes, or a
line saying that the case bank has none of its kind; and one line saying that no language model wrote it
and how an operator adds one. It draws no legal
conclusion: every sentence is a quotation or says which fact and which statute share which words. Its
citations are real, so the checker verifies them like any answer's.

**A model's answer is checked before it is shown** (:meth:`Lawyer.held_back`, :mod:`.answer_check`): an
empty one, one that repeats LawLuo's prompt, one that goes round in circles, one with hardly any Chinese to a
Chinese question, or one still cut at ``max_tokens`` after the model was asked to finish it
(:mod:`~lawluo.llm.continuation`) is held back, and the firm shows :func:`grounded_reply` in its place (closed
by :data:`REPLY_HELD_BACK` instead of :data:`REPLY_NO_MODEL`).

**Untrusted text.** The question and the facts the client confirmed and denied (the tree's elements come
from a model or the case bank) are each quoted between ``<<<`` and ``>>>`` in ``lawyer/turn``, which says
that nothing quoted is an instruction. They, the earlier turns and the statutes go through
:func:`~lawluo.prompts.untrusted.quote`: a ``<<<`` or ``>>>`` in them is written full-width, so none can
close a quotation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from .. import prompts
from ..domains import OTHER, PACKAGED, Domain, Domains
from ..llm import ChatBackend, gather
from ..llm.continuation import chat_to_the_end, stream_to_the_end
from ..prompts.untrusted import quote
from ..retrieval.case_fit import NONE_FITS
from ..retrieval.statute_fit import STATUTE_STOPWORDS
from ..text import tokenize
from .answer_check import LOOP_RATIO, Held, check_answer, repeated_share

PREFERRED_LAW_BOOST = 1.25  # a preferred law's article must be within 25% of the best score to outrank it
CANDIDATES_PER_STATUTE = 4
#: The statute search's first articles that must attest a similar case's kind (:func:`retrieve_cases`): the
#: 5 the lawyer is shown and the next 5 (the depth of issue 39's R@10; dev data chose it, session 36).
CASE_ATTESTING_STATUTES = 10
CANDIDATES_PER_CASE = 20  # fitting cases looked at, so that 其他 still has k once criminal ones are left out
STATUTE_TEXT_CHARS = 300
HISTORY_CHARS = 6000  # older turns beyond this budget are dropped, oldest first

# -- the answer without a model (grounded_reply) ---------------------------------------------------
REPLY_STATUTES = 3  # statutes quoted in any case; a retrieved one a marked fact links to is added
QUOTE_CHARS = 150  # a quoted statute is cut at a clause boundary near this length
OUTCOME_CHARS = 120  # a case's outcome likewise
SHARED_WORDS_SHOWN = 3
CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
#: Words too common in statutes to link a fact to one of them.
LINK_STOPWORDS = STATUTE_STOPWORDS
REPLY_LEAD = "根据您的问题{facts}，系统从法条库中检索到以下可能相关的条文（原文摘录）："
REPLY_LEAD_FACTS = "和您确认的事实"
#: Nothing passed the bar (:mod:`lawluo.retrieval.statute_fit`): said plainly, with where to look instead.
REPLY_NO_STATUTES = (
    "法条库中没有检索到与您的问题明显相关的条文。您可以补充事情的经过后再问，或在“法条检索”页按法律名称、"
    "条号或关键词查找。"
)
REPLY_STATUTES_HEAD = "**可能相关的法条（系统检索，未经律师判断）**"
#: Under a quoted statute: the part of the question it was found for and the words they share.
REPLY_FOUND_FOR = "检索依据：您说的“{part}”（都提到{words}）"
REPLY_FOUND_FOR_FACT = "检索依据：您在澄清树中确认的事实"
REPLY_FOUND_FOR_NAMED = "检索依据：您的问题提到了这一条"
REPLY_FACTS_HEAD = "**您标记的事实与这些法条**"
REPLY_FACT = "您{verb}：{fact} —— {link}"
#: A fact the client marked 否, as the question it answered (issue 42: "您否认：购房款有父母出资，出资在婚前还是
#: 婚后" read as nonsense: a denial of a statement made from a question does not always read as one).
REPLY_DENIED = "您对“{fact}”回答“否” —— {link}"
REPLY_LINK = "与法条{ref}有关（都提到{words}）。"
REPLY_SOURCE = "与法条{ref}有关：澄清树依据该条及相关条文提出了这个问题。"
REPLY_NO_LINK = "上面的法条没有直接提到这一点。"
REPLY_NO_MARKS = "您还没有在澄清树中标记事实；以上法条只根据问题本身检索。"
REPLY_FACTS_HEAD_ALONE = "**您标记的事实**"  # when no statute is listed
REPLY_NO_MARKS_ALONE = "您还没有在澄清树中标记事实。"
REPLY_CASES_HEAD = "**相似案例**"
REPLY_NO_CASES = NONE_FITS  # 案例库中没有与此问题同类的案例。
REPLY_SENTENCE = "刑期：{sentence}"
REPLY_NO_PRISON = "刑期：未判处监禁刑"
REPLY_NO_OUTCOME = "（案例库未记录裁判结果）"
#: The one plain line: no model wrote this, and how an operator adds one.
REPLY_NO_MODEL = (
    "（以上内容由系统从法条库和案例库中直接摘录，没有经过语言模型分析，不构成法律意见。"
    "本站尚未配置律师模型：网站管理员按“关于”页的说明为律师角色配置语言模型后，这里会显示律师的分析。）"
)
#: The same line when a model's answer was held back (the reason is shown with the turn).
REPLY_HELD_BACK = "（以上内容由系统从法条库和案例库中直接摘录，没有经过语言模型分析，不构成法律意见。）"


@dataclass
class Brief:
    domain: Domain
    question: str
    history: list[tuple[str, str]] = field(default_factory=list)  # earlier ("client"|"lawyer", text)
    confirmed: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    statutes: list[dict] = field(default_factory=list)  # StatuteHit.as_dict()
    cases: list[dict] = field(default_factory=list)  # CaseHit.as_dict(): quoted only without a model
    notices: list[str] = field(default_factory=list)  # what the statute database says of a named law
    #: a marked fact → the article its statute entry begins with (``《law》第…条``), for the answer without a model
    sources: dict[str, str] = field(default_factory=dict)


def retrieve_statutes(searcher, domain: Domain, query: str, k: int) -> list[dict]:
    """The ``k`` best articles for ``query``, articles of the domain's preferred laws boosted."""
    preferred = set(domain.preferred_laws)
    hits = [h.as_dict() for h in searcher.search(query, k * CANDIDATES_PER_STATUTE)]
    for hit in hits:
        hit["preferred"] = hit["law"] in preferred
    # An article the query names by law and number (劳动合同法第82条) stays first.
    hits.sort(
        key=lambda h: (not h.get("exact"), -h["score"] * (PREFERRED_LAW_BOOST if h["preferred"] else 1.0))
    )
    return hits[:k]


def lookup_notices(searcher, query: str) -> list[str]:
    """What the statute database says of a law or article the query names and cannot give (a repealed
    law and what replaced it), for the lawyer's grounding; none from a searcher without lookup."""
    lookup = getattr(searcher, "lookup", None)
    return [m for x in lookup(query) if (m := x.message())] if lookup else []


def retrieve_cases(
    searcher,
    domain: Domain,
    query: str,
    k: int,
    guarded: Sequence[Domain] = (),
    statutes: Sequence[dict] | None = None,
    kind: str | None = None,
) -> list[dict]:
    """The ``k`` best cases of the question's kind (:meth:`~lawluo.retrieval.cases.CaseSearcher.similar`:
    a case's cause of action must fit the question's, and the case be of the domain); none when the case
    bank has none of its kind or the question's kind is unknown, and the answer then says so
    (:data:`REPLY_NO_CASES`): a divorce question is not like a theft, nor a loan like a lease (the case
    bank is three-quarters criminal). For 其他, the cases of a ``guarded`` domain (the table's rows with
    ``guarded_by``: the criminal one) only when the question says one of its words
    (:meth:`~lawluo.domains.Domain.said_in`, as for the clarification material).

    ``statutes``: the first :data:`CASE_ATTESTING_STATUTES` articles :func:`retrieve_statutes` found for the
    question; a case's kind must then be attested by one of them
    (:meth:`~lawluo.retrieval.cases.CaseSearcher.attested`). ``None``: not asked. ``kind``: the kind of case the
    labelled questions nearest it read (:class:`~lawluo.retrieval.case_kind.CaseKinds`), which the question's
    cause must fit; ``None``: not asked."""
    articles = None if statutes is None else [(s.get("law"), s.get("article")) for s in statutes]
    hits = [
        h.as_dict()
        for h in searcher.similar(query, k * CANDIDATES_PER_CASE, domain.id, articles=articles, kind=kind)
    ]
    if domain.id == OTHER:
        unsaid = {g.cases_as for g in guarded if not g.said_in(query)}
        hits = [h for h in hits if h.get("domain_hint") not in unsaid]
    return hits[:k]


class Lawyer:
    name = "lawyer"

    def __init__(self, model: ChatBackend, continuations: int = 1) -> None:
        self.model = model
        #: Times an answer cut at ``max_tokens`` is asked to finish (:mod:`~lawluo.llm.continuation`).
        self.continuations = continuations

    @property
    def available(self) -> bool:
        return self.model.available

    def messages(self, brief: Brief) -> list[dict[str, str]]:
        """System: the domain's role prompt. Then the earlier turns, then this turn with its grounding."""
        messages = [{"role": "system", "content": brief.domain.role_prompt()}]
        for role, text in _recent(brief.history):
            messages.append({"role": "user" if role == "client" else "assistant", "content": quote(text)})
        statutes = _statutes_block(brief)
        messages.append(
            {
                "role": "user",
                "content": prompts.render(
                    "lawyer/turn",
                    question=quote(brief.question),
                    confirmed=quote(_facts_block(brief.confirmed, brief.sources)) or "（无）",
                    denied=quote(_facts_block(brief.denied, brief.sources)) or "（无）",
                    statutes=quote(statutes) or "（未检索到相关法条）",
                    length=self.answer_chars(),
                ),
            }
        )
        return messages

    def answer_chars(self) -> int:
        """The length the turn prompt asks for, in Chinese characters: what the model's ``max_tokens`` holds
        (about 0.8 character a token once punctuation and the odd English word are counted), rounded down to
        50, between 150 and 1,500; 800 for a backend without ``max_tokens``. A small model told nothing wrote
        until it was cut (issue 41: ``max_tokens=300``).

        >>> Lawyer(None).answer_chars()
        800
        """
        max_tokens = getattr(getattr(self.model, "options", None), "max_tokens", None)
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return 800
        return max(150, min(1500, int(max_tokens * 0.8) // 50 * 50))

    def finish_prompt(self) -> str:
        """What an answer cut at ``max_tokens`` is sent back with (``lawyer/finish``): finish it, briefly."""
        return prompts.render("lawyer/finish", length=max(100, self.answer_chars() // 4))

    def stream(self, brief: Brief) -> Iterator[str]:
        """The answer piece by piece; cut at ``max_tokens``, the model is asked to finish it
        (:func:`~lawluo.llm.continuation.stream_to_the_end`), at most :attr:`continuations` times."""
        return stream_to_the_end(
            self.model, self.messages(brief), self.finish_prompt(), self.continuations, not_looping
        )

    def answers(self, brief: Brief, n: int) -> list[str]:
        """``n`` independent answers, generated in parallel (for the boss's best-of-n), each finished like
        :meth:`stream`'s when it was cut."""
        messages, finish = self.messages(brief), self.finish_prompt()
        return gather(
            [
                lambda: chat_to_the_end(self.model, messages, finish, self.continuations, not_looping)
                for _ in range(n)
            ]
        )

    def held_back(self, brief: Brief, answer: str, cut_at: int | None = None) -> Held | None:
        """Why ``answer`` to ``brief`` must not be shown as advice (:func:`~.answer_check.check_answer`
        against the prompt :meth:`messages` sends), else ``None``. The retrieved statutes and the lawyer's
        earlier answers may be repeated: they are the answer's material, not LawLuo's prompt."""
        messages = self.messages(brief)
        own = "\n".join(m["content"] for m in messages)
        earlier = [m["content"] for m in messages if m["role"] == "assistant"]
        quotable = "\n".join([quote(_statutes_block(brief)), *earlier])
        return check_answer(answer, own, brief.question, quotable, cut_at, earlier)


def not_looping(text: str) -> bool:
    """Whether a cut answer is worth asking to finish: not one going round in circles (``loop``)."""
    return repeated_share(text) < LOOP_RATIO


def _facts_block(facts: list[str], sources: dict[str, str]) -> str:
    """The marked facts as the turn's prompt lists them, each with the article it was drawn from, if any.

    >>> print(_facts_block(["对方是否已把您拉黑？", "是否报警？"], {"对方是否已把您拉黑？": "《民法典》第九百八十五条"}))
    - 对方是否已把您拉黑？（澄清要素出自《民法典》第九百八十五条）
    - 是否报警？
    """
    return "\n".join(f"- {s}" + (f"（澄清要素出自{sources[s]}）" if s in sources else "") for s in facts)


def _statutes_block(brief: Brief) -> str:
    """The retrieved statutes (and the database's notices) as the turn's prompt lists them."""
    return "\n".join(
        [f"- 注意：{n}" for n in brief.notices]  # e.g. the client names an article of a repealed law
        + [f"- 《{s['law']}》{s['article_label']}：{s['text'][:STATUTE_TEXT_CHARS]}" for s in brief.statutes]
    )


def _recent(history: list[tuple[str, str]]) -> list[tuple[str, str]]:
    kept, used = [], 0
    for role, text in reversed(history):
        used += len(text)
        if used > HISTORY_CHARS:
            break
        kept.append((role, text))
    return kept[::-1]


# -- the answer without a model ----------------------------------------------------------------------


def grounded_reply(brief: Brief, closing: str = REPLY_NO_MODEL) -> str:
    """The answer without a model: an extract of ``brief``'s statutes and cases, in Chinese (Markdown).

    A short lead; the statutes quoted (the first :data:`REPLY_STATUTES`, plus any other a marked fact
    links to), each as ``①《law》第…条规定：“…”`` so that the checker finds and verifies it; each fact
    the client confirmed or denied with the article its statute entry begins with when that article is
    among the statutes (``brief.sources``; a confirmed element brings it, ``Firm.retrieve``), else with the
    quoted statute it shares the most words with (:func:`link_facts`), or a line saying none does; the
    cases with their outcomes; and ``closing``
    (:data:`REPLY_NO_MODEL`; :data:`REPLY_HELD_BACK` in place of a model's answer that was held back).
    Nothing in it is a legal conclusion.
    """
    marked = [("确认", fact) for fact in brief.confirmed] + [("否认", fact) for fact in brief.denied]
    position = {
        f"《{s['law']}》{s['article_label']}": i for i, s in reversed(list(enumerate(brief.statutes)))
    }
    links = [
        (position[cite], []) if (cite := brief.sources.get(fact)) in position else link
        for (_, fact), link in zip(
            marked, link_facts([fact for _, fact in marked], brief.statutes), strict=True
        )
    ]
    linked = {i for i, _ in links if i is not None}
    fitting = [i for i, s in enumerate(brief.statutes) if passes_bar(s)]
    shown = [i for n, i in enumerate(fitting) if n < REPLY_STATUTES or i in linked][: len(CIRCLED)]
    ref = {i: CIRCLED[n] for n, i in enumerate(shown)}
    out = [REPLY_LEAD.format(facts=REPLY_LEAD_FACTS if brief.confirmed else "")] if shown else []
    if shown:
        out.append(REPLY_STATUTES_HEAD)
        for i in shown:
            s = brief.statutes[i]
            out.append(
                f"{ref[i]} 《{s['law']}》{s['article_label']}规定：“{_clip_text(s['text'], QUOTE_CHARS)}”"
                + (f"\n{why}" if (why := found_for(s)) else "")
            )
    else:
        out.append(REPLY_NO_STATUTES)
    out.append(REPLY_FACTS_HEAD if shown else REPLY_FACTS_HEAD_ALONE)
    if marked:
        lines = []
        for (verb, fact), (i, words) in zip(marked, links, strict=True):
            if i is None or i not in ref:
                link = REPLY_NO_LINK
            elif words:
                link = REPLY_LINK.format(ref=ref[i], words="".join(f"“{w}”" for w in words))
            else:  # the article the fact's statute entry begins with
                link = REPLY_SOURCE.format(ref=ref[i])
            if verb == "否认":
                lines.append("- " + REPLY_DENIED.format(fact=as_question(fact), link=link))
            else:
                lines.append("- " + REPLY_FACT.format(verb=verb, fact=as_statement(fact), link=link))
        out.append("\n".join(lines))
    else:
        out.append(REPLY_NO_MARKS if shown else REPLY_NO_MARKS_ALONE)
    out.append(REPLY_CASES_HEAD)
    if brief.cases:
        out.append("\n".join(f"- {_case_line(c)}" for c in brief.cases))
    else:
        out.append(REPLY_NO_CASES)
    out.append(closing)
    return "\n\n".join(out)


def passes_bar(statute: Mapping) -> bool:
    """Whether a retrieved statute is shown as possibly relevant (:mod:`lawluo.retrieval.statute_fit`;
    a statute retrieved without the bar's annotation, by a caller other than the firm, is shown)."""
    fit = statute.get("fit")
    return not isinstance(fit, Mapping) or bool(fit.get("passes"))


def found_for(statute: Mapping) -> str:
    """The line under a quoted statute saying what it was found for (``""`` when the bar gave nothing)."""
    fit = statute.get("fit") if isinstance(statute.get("fit"), Mapping) else {}
    if statute.get("confirmed"):
        return REPLY_FOUND_FOR_FACT
    if fit.get("part") and fit.get("words"):
        shared = "".join(f"“{w}”" for w in list(fit["words"])[:SHARED_WORDS_SHOWN])
        return REPLY_FOUND_FOR.format(part=fit["part"], words=shared)
    if statute.get("exact"):
        return REPLY_FOUND_FOR_NAMED
    return ""


def is_criminal_question(question: str, domain_id: str, domains: Domains = PACKAGED) -> bool:
    """A question of a guarded domain (``guarded_by`` in the domain table; shipped: the criminal one):
    routed to it, or saying one of its words. Criminal statutes pass the page's bar for such a question
    only (:mod:`lawluo.retrieval.statute_fit`).

    >>> is_criminal_question("楼上邻居家水管漏水", "tort"), is_criminal_question("他被刑拘了", "other")
    (False, True)
    """
    return any(g.id == domain_id or g.said_in(question or "") for g in domains.guarded)


def link_facts(facts: Sequence[str], statutes: Sequence[dict]) -> list[tuple[int | None, list[str]]]:
    """For each fact, the index of the statute it shares the most words with, and those words (at most
    :data:`SHARED_WORDS_SHOWN`, rarest among the statutes first); ``(None, [])`` when it shares too little.

    Words are the search tokenizer's of two or more characters, minus :data:`LINK_STOPWORDS`; a word inside
    another shared word (班费 in 加班费) is not counted again; a link needs two shared words or one of three
    characters or more. Ties go to the better-ranked statute.

    >>> statutes = [{"text": "下列财产为夫妻一方的个人财产"}, {"text": "夫妻在婚后所得的房产"}]
    >>> link_facts(["婚后购买的房产", "双方约定了利息"], statutes)
    [(1, ['婚后', '房产']), (None, [])]
    """
    bags = [_words(s.get("text", "")) for s in statutes]
    spread = {w: sum(w in bag for bag in bags) for bag in bags for w in bag}
    out: list[tuple[int | None, list[str]]] = []
    for fact in facts:
        words = _words(fact)
        best, shared = None, []
        for i, bag in enumerate(bags):
            common = [w for w in dict.fromkeys(tokenize(fact)) if w in words and w in bag]
            if len(common) > len(shared):
                best, shared = i, common
        shared = [w for w in shared if not any(w != other and w in other for other in shared)]
        if len(shared) < 2 and not any(len(w) >= 3 for w in shared):
            best, shared = None, []  # one common two-character word (约定, 赔偿) links nothing
        out.append((best, sorted(shared, key=lambda w: spread[w])[:SHARED_WORDS_SHOWN]))
    return out


_QUESTION_FORM = re.compile(r"是否|[？?。]+$")


def as_statement(fact: str) -> str:
    """A tree element as a statement: ``劳动合同是否已解除？`` → ``劳动合同已解除``."""
    text = " ".join(fact.split())
    return _QUESTION_FORM.sub("", text) or text


def as_question(fact: str) -> str:
    """A tree element as the question it is: ``购房款是否有父母出资`` → ``购房款是否有父母出资？``."""
    text = " ".join(fact.split()).rstrip("。.")
    return text if text.endswith(("？", "?")) else text + "？"


def _words(text: str) -> set[str]:
    return {w for w in tokenize(text) if len(w) >= 2 and w not in LINK_STOPWORDS}


_BREAKS = "。；;！？"
_HEADINGS = re.compile(r"【[^】]{1,12}】")


def _clip_text(text: str, limit: int) -> str:
    """``text`` on one line, cut after the last sentence or clause end before ``limit`` characters (at
    ``limit`` when there is none past the first third), with ``……`` when cut."""
    flat = "".join(line.strip() for line in text.splitlines())
    if len(flat) <= limit:
        return flat
    head = flat[:limit]
    cut = max(head.rfind(mark) for mark in _BREAKS)
    if cut < limit // 3:
        cut = max(head.rfind("，"), head.rfind(","))
    return (head[: cut + 1] if cut >= limit // 3 else head) + "……"


def _case_line(case: dict) -> str:
    title = " ".join(str(case.get("title") or "").split()) or "案例"
    cause = f"（{case['cause']}）" if case.get("cause") and case["cause"] not in title else ""
    outcome = _plain_outcome(str(case.get("outcome") or ""))
    if outcome:
        result = _clip_text(outcome, OUTCOME_CHARS)
    elif case.get("sentence"):
        sentence = str(case["sentence"])
        result = REPLY_NO_PRISON if sentence == "0个月" else REPLY_SENTENCE.format(sentence=sentence)
    else:
        result = REPLY_NO_OUTCOME
    return f"{title}{cause}：{result}"


_RULING = re.compile(r"(?:判决|裁定|裁决|决定)如下[:：]")
_CITES = re.compile(r"《|第[一二三四五六七八九十百千零〇两\d]+条")
_CLAUSE = re.compile(r"[^。；;]+[。；;]?")


def _plain_outcome(outcome: str) -> str:
    """A case's outcome without its headings and without the statutes it cites (those are the court's
    citations, not this answer's): what follows 判决如下：, up to the first clause that cites a statute
    (or, when the outcome opens with one, every clause that cites none)."""
    text = "".join(line.strip() for line in _HEADINGS.sub("", outcome).splitlines())
    ruling = _RULING.search(text)
    if ruling:
        text = text[ruling.end() :]
    clauses = _CLAUSE.findall(text)
    cites = [bool(_CITES.search(c)) for c in clauses]
    if True in cites and cites.index(True) > 0:
        clauses = clauses[: cites.index(True)]
    return "".join(c for c, cited in zip(clauses, cites, strict=False) if not cited).strip()
