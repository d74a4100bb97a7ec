"""The citation checker's verdict rules: one small function per rule, tried in order by :func:`judge`.

Each rule looks at one citation (a :class:`CheckContext`) and either gives a verdict (a
:class:`~lawluo.law.checked.Checked`) or passes (``None``); the first rule that gives one decides. The
verdicts a rule may give are marked on it (:func:`gives`), so ``tests/test_verdicts.py`` can tell that
every row of the verdict table (:mod:`lawluo.law.verdicts`) has a rule and every rule a row. The stages:

1. :data:`THE_LAW` — is a law named, is it repealed (or was it in force on the day judged on)?
2. :func:`pick_version` chooses the version judged against — the one the citation names
   (``《公司法》(2018年修正)``), else the one in force on ``as_of``, else today's — and
   :data:`THE_VERSION` says when there was none yet;
3. :func:`measure` finds the cited article and how well the content agrees with it and with the law's
   best other article (:meth:`~lawluo.law.checker.CitationChecker.agreement`, module docstring of
   :mod:`lawluo.law.checker`); :data:`BARE` (name and number only) or :data:`QUOTED` give the verdict;
4. :data:`AFTERWARDS` revise it for the date: a mismatch against a later text than the one in force is not
   judged, and a citation right on its date whose article has changed since is ``amended_since``.

A new verdict: its rule here (a function marked with :func:`gives`, placed in its stage's tuple), its row in
:data:`lawluo.law.verdicts.VERDICT_TABLE`, its strings in ``lawluo/strings/statutes.yaml``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..i18n import Message, message
from .checked import Checked
from .citations import Citation
from .database import Article, Law, StatuteDB

AGREE = 50.0
AGREE_STATED = 50.0
#: Content shorter than this (normalised characters) is compared with the cited article only: a short
#: phrase such as a crime's name matches some window of many articles.
MIN_SEARCH = 15
#: Another article must reach this score to be called the content's real article (wrong_number,
#: a repealed law's successor), and must beat a cited article that merely passes the threshold by
#: MARGIN with at least CLEAR_MATCH to overturn it.
WRONG_NUMBER = 70.0
#: A repealed law's successor rewords its articles (合同法 art. 32 → 民法典 art. 490), so the
#: successor's article is named at a lower agreement.
SUCCESSOR = 55.0
CLEAR_MATCH = 85.0
#: A quote that agrees with today's article is still an older version's when it agrees with that
#: version's article this well and by this much more (a few words reworded by the amendment).
OLDER_CLEARLY = 90.0
OLDER_MARGIN = 8.0
#: …or when, this long (normalised characters), it is word for word that version's text and not today's.
OLDER_VERBATIM = 20
MARGIN = 25.0
#: A cited article this close to the quote cannot be beaten by MARGIN: no need to search the law.
NEAR_EXACT = 100.0 - MARGIN + 10.0
#: Verdicts that say nothing when the text judged against is later than the one in force on the day.
UNJUDGED_ON_LATER_TEXT = ("wrong_number", "content_mismatch", "not_found")


class Comparer(Protocol):
    """What the rules ask of the checker (:class:`lawluo.law.checker.CitationChecker`): the database and
    how well content agrees with an article."""

    db: StatuteDB

    def agreement(self, quoted_norm: str, art: Article) -> float: ...

    def best_in_law(
        self, quoted_norm: str, law: Law, exclude: Article | None = None
    ) -> tuple[Article | None, float]: ...

    def conflict(self, quoted: str, art: Article) -> str: ...

    def article_norm(self, art: Article) -> str: ...


@dataclass
class CheckContext:
    """One citation as the rules see it: the citation, its content normalised, the day it is judged on
    (``as_of``, ISO: the date the text was written, or of the facts; ``None``: today's statute book), and
    what :func:`pick_version` and :func:`measure` found."""

    checker: Comparer  # the CitationChecker
    citation: Citation
    quoted_norm: str  # the quoted content, normalised (:func:`lawluo.law.checker.normalise`)
    as_of: str | None = None
    #: the law's versions, newest first; the one judged against (``None``: none in force yet on ``as_of``)
    versions: list[Law] = field(default_factory=list)
    reference: Law | None = None
    named: Law | None = None  # the version the citation names
    dated_note: Message | None = None  # none was in force on ``as_of``: judged against the oldest held
    older: list[Law] = field(default_factory=list)  # versions older than ``reference``
    newer: list[Law] = field(default_factory=list)  # versions newer than ``reference``
    art: Article | None = None  # the cited article in ``reference``
    notes: tuple[Message, ...] = ()  # the resolution's notes (and a wrong 编 of the 民法典)
    threshold: float = AGREE
    s_cited: float = 0.0  # agreement of the content with ``art``
    searchable: bool = False  # the content is long enough to search the law for its article
    best: Article | None = None  # the law's other article that agrees best with the content
    s_best: float = 0.0

    @property
    def db(self) -> StatuteDB:
        return self.checker.db

    def checked(self, verdict: str, matched: Article | None = None, score=None, *notes: Message) -> Checked:
        """This citation's verdict, with the article matched, its score and the notes saying why."""
        return Checked(self.citation, verdict, matched, score, tuple(notes))


Rule = Callable[[CheckContext], Checked | None]


_R = TypeVar("_R", bound=Callable)


def gives(*verdicts: str) -> Callable[[_R], _R]:
    """Mark a rule with the verdicts it may give (``rule.verdicts``)."""

    def mark(rule: _R) -> _R:
        rule.verdicts = verdicts  # type: ignore[attr-defined]
        return rule

    return mark


def _first(rules: Iterable[Rule], ctx: CheckContext) -> Checked | None:
    for rule in rules:
        checked = rule(ctx)
        if checked is not None:
            return checked
    return None


def _in_versions(ctx: CheckContext, versions: list[Law]) -> Article | None:
    """The cited article in the first of ``versions`` that has it."""
    for law in versions:
        art = ctx.db.article(law, ctx.citation.article, ctx.citation.suffix)
        if art is not None:
            return art
    return None


# -- 1. the law ---------------------------------------------------------------------------------


@gives("not_found")
def no_law_named(ctx: CheckContext) -> Checked | None:
    """No law named, or one the database knows nothing of."""
    res = ctx.citation.resolution
    if res is None or (res.key is None and res.repeal is None):
        return Checked(
            ctx.citation, "not_found", notes=res.notes if res else (message("statute.note.no_law_named"),)
        )
    return None


def _in_force_on_as_of(ctx: CheckContext) -> bool:
    """The law has been repealed, but was still in force on ``as_of``."""
    res = ctx.citation.resolution
    law_key = res.key or res.repeal.key
    return bool(
        ctx.as_of is not None and ctx.db.repealed_on(law_key, ctx.as_of) is None and ctx.db.repeal(law_key)
    )


@gives("no_content")
def in_force_then_without_text(ctx: CheckContext) -> Checked | None:
    """In force on ``as_of``, but the database holds none of its text."""
    res = ctx.citation.resolution
    if _in_force_on_as_of(ctx) and res.key is None:
        note = message("statute.note.in_force_no_text", law=res.repeal.name, day=ctx.as_of)
        return ctx.checked("no_content", None, None, note)
    return None


@gives("repealed")
def repealed_law(ctx: CheckContext) -> Checked | None:
    """The law has been repealed (and was on ``as_of``): its successor's article where the content is one."""
    res = ctx.citation.resolution
    if res.repeal is None or _in_force_on_as_of(ctx):  # resolve() sets it only when no version is in force
        return None
    rep = res.repeal
    by = rep.repealed_by or message("statute.note.issuing_authority")
    if rep.clause:
        note = message(
            "statute.note.repealed_by_clause", law=rep.name, by=by, clause=rep.clause.split(" ")[0]
        )
    else:
        note = message("statute.note.repealed_by", law=rep.name, by=by)
    successor = ctx.db.current(rep.successor_key) if rep.successor_key else None
    if successor is None:
        return ctx.checked("repealed", None, None, note)
    if len(ctx.quoted_norm) >= MIN_SEARCH:
        art, s = ctx.checker.best_in_law(ctx.quoted_norm, successor)
        if art is not None and s >= SUCCESSOR:
            now_is = message("statute.note.now_is", law=successor.name, label=art.label)
            return ctx.checked("repealed", art, s, note, now_is)
    return ctx.checked("repealed", None, None, note, message("statute.note.successor", law=successor.name))


THE_LAW: tuple[Rule, ...] = (no_law_named, in_force_then_without_text, repealed_law)


# -- 2. the version -----------------------------------------------------------------------------


def pick_version(ctx: CheckContext) -> None:
    """The version judged against: the one the citation names, else the one in force on ``as_of`` (the
    oldest held, with a note, when the law existed but no version held was in force), else today's."""
    res = ctx.citation.resolution
    versions = ctx.versions = ctx.db.versions(res.key)
    ctx.reference = versions[0]
    ctx.named = next((v for v in versions if res.version and v.version == res.version), None)
    if ctx.named is not None:
        ctx.reference = ctx.named
    elif ctx.as_of is not None:
        dated = ctx.db.version_in_force(res.key, ctx.as_of)
        if dated is not None:
            ctx.reference = dated
        elif not ctx.db.existed_on(res.key, ctx.as_of):
            ctx.reference = None
        else:
            ctx.reference = versions[-1]
            ctx.dated_note = message(
                "statute.note.no_version_on", day=ctx.as_of, version=ctx.reference.version
            )


@gives("not_found")
def not_yet_in_force(ctx: CheckContext) -> Checked | None:
    """No version of the law was in force on ``as_of``."""
    if ctx.reference is not None:
        return None
    oldest = ctx.versions[-1]
    since = oldest.first_in_force or oldest.effective
    if since:
        note = message("statute.note.not_yet_in_force_since", law=oldest.name, day=ctx.as_of, since=since)
    else:
        note = message("statute.note.not_yet_in_force", law=oldest.name, day=ctx.as_of)
    return ctx.checked("not_found", None, None, note)


THE_VERSION: tuple[Rule, ...] = (not_yet_in_force,)


# -- 3. the article and its content -------------------------------------------------------------


def measure(ctx: CheckContext) -> None:
    """The cited article in the version judged against, the versions around it, and — for quoted content —
    its agreement with the cited article and with the law's best other article."""
    cit, res, reference = ctx.citation, ctx.citation.resolution, ctx.reference
    ctx.threshold = AGREE_STATED if cit.content_kind == "stated" else AGREE
    ctx.older = [v for v in ctx.versions if v.version < reference.version]
    ctx.newer = [v for v in ctx.versions if v.version > reference.version]
    art = ctx.art = ctx.db.article(reference, cit.article, cit.suffix)
    ctx.notes = res.notes
    if res.part and art is not None and art.part and art.part != res.part:
        ctx.notes = (*ctx.notes, message("statute.note.wrong_part", part=art.part, cited=res.part))
    if not ctx.quoted_norm:
        return
    ctx.s_cited = ctx.checker.agreement(ctx.quoted_norm, art) if art is not None else 0.0
    ctx.searchable = len(ctx.quoted_norm) >= MIN_SEARCH
    if ctx.searchable and ctx.s_cited < NEAR_EXACT:
        ctx.best, ctx.s_best = ctx.checker.best_in_law(ctx.quoted_norm, reference, exclude=art)


@gives("no_content")
def article_without_content(ctx: CheckContext) -> Checked | None:
    """Name and number only, and the article exists."""
    if ctx.art is not None:
        return Checked(ctx.citation, "no_content", ctx.art, notes=ctx.notes)
    return None


@gives("outdated_version")
def number_only_in_older_version(ctx: CheckContext) -> Checked | None:
    """Name and number only, and only an older version has the article."""
    old = _in_versions(ctx, ctx.older)
    if old is not None:
        return ctx.checked(
            "outdated_version", old, None, message("statute.note.only_in_version", version=old.law.version)
        )
    return None


@gives("no_content")
def number_only_in_later_version(ctx: CheckContext) -> Checked | None:
    """Name and number only, and only a later version (not yet in force on the text's date) has the article."""
    new = _in_versions(ctx, ctx.newer)
    if new is not None:
        note = message("statute.note.in_later_version", version=new.law.version)
        return ctx.checked("no_content", new, None, note)
    return None


@gives("not_found")
def no_such_article(ctx: CheckContext) -> Checked | None:
    """No version of the law has the article (and no article carries the content)."""
    note = message("statute.note.law_has_no", law=ctx.reference.name, label=ctx.citation.label)
    return ctx.checked("not_found", None, None, note)


def _cited_agrees(ctx: CheckContext) -> bool:
    """The cited article agrees, unless another article of the law is a clearly better match (shared
    penalty formulas let a wrong article reach the threshold)."""
    overturned = ctx.s_best >= CLEAR_MATCH and ctx.s_best >= ctx.s_cited + MARGIN
    return ctx.s_cited >= ctx.threshold and not overturned


@gives("content_mismatch")
def reads_otherwise(ctx: CheckContext) -> Checked | None:
    """Every piece of the content is in the cited article, but joined or worded to say something else."""
    if not _cited_agrees(ctx):
        return None
    changed = ctx.checker.conflict(ctx.citation.quoted, ctx.art)
    if changed:
        note = message("statute.note.reads_otherwise", detail=changed)
        return ctx.checked("content_mismatch", ctx.art, ctx.s_cited, note)
    return None


@gives("outdated_version")
def older_words(ctx: CheckContext) -> Checked | None:
    """The cited article agrees, but the content is an older version's words, close to today's but not the
    same: word for word that version's text and not today's, or agreeing with it clearly better."""
    if not _cited_agrees(ctx):
        return None
    cit, quoted_norm = ctx.citation, ctx.quoted_norm
    verbatim_now = quoted_norm in ctx.checker.article_norm(ctx.art)
    for old_law in ctx.older:
        old = ctx.db.article(old_law, cit.article, cit.suffix)
        s_old = ctx.checker.agreement(quoted_norm, old) if old is not None else 0.0
        verbatim_then = (
            old is not None
            and not verbatim_now
            and len(quoted_norm) >= OLDER_VERBATIM
            and quoted_norm in ctx.checker.article_norm(old)
        )
        if verbatim_then or (s_old >= OLDER_CLEARLY and s_old >= ctx.s_cited + OLDER_MARGIN):
            note = message("statute.note.matches_version", version=old_law.version)
            return ctx.checked("outdated_version", old, s_old, note)
    return None


@gives("verified")
def cited_article_agrees(ctx: CheckContext) -> Checked | None:
    """The content agrees with the cited article."""
    if _cited_agrees(ctx):
        return Checked(ctx.citation, "verified", ctx.art, ctx.s_cited, ctx.notes)
    return None


@gives("verified")
def later_version_agrees(ctx: CheckContext) -> Checked | None:
    """The content agrees with a later version's article: the text may be dated before the amendment it
    quotes took effect."""
    cit, quoted_norm = ctx.citation, ctx.quoted_norm
    for new_law in ctx.newer:
        new = ctx.db.article(new_law, cit.article, cit.suffix)
        s_new = ctx.checker.agreement(quoted_norm, new) if new is not None else 0.0
        if s_new < ctx.threshold or ctx.checker.conflict(cit.quoted, new):
            continue
        _other, s_other = (
            ctx.checker.best_in_law(quoted_norm, new_law, exclude=new) if ctx.searchable else (None, 0.0)
        )
        if not (s_other >= CLEAR_MATCH and s_other >= s_new + MARGIN):
            note = message("statute.note.matches_later", version=new_law.version)
            return ctx.checked("verified", new, s_new, note)
    return None


@gives("outdated_version")
def older_version_agrees(ctx: CheckContext) -> Checked | None:
    """The content agrees better with an older version's article of that number — unless another article
    of today's law agrees clearly better (a renumbered article agrees as well with both: the cited number
    was right then)."""
    cit = ctx.citation
    for old_law in ctx.older:
        old = ctx.db.article(old_law, cit.article, cit.suffix)
        if old is not None:
            s_old = ctx.checker.agreement(ctx.quoted_norm, old)
            if (
                s_old >= ctx.threshold
                and s_old > ctx.s_cited
                and not (ctx.best is not None and ctx.s_best > s_old + 5)
            ):
                note = message("statute.note.matches_version", version=old_law.version)
                return ctx.checked("outdated_version", old, s_old, note)
    return None


@gives("wrong_number")
def other_article(ctx: CheckContext) -> Checked | None:
    """The content is another article of the law."""
    if ctx.best is not None and ctx.s_best >= max(ctx.threshold, WRONG_NUMBER):
        note = message("statute.note.content_is", label=ctx.best.label)
        return ctx.checked("wrong_number", ctx.best, ctx.s_best, note)
    return None


@gives("outdated_version")
def other_article_of_older_version(ctx: CheckContext) -> Checked | None:
    """The content is another article of an older version, better than any of the version judged against."""
    if not ctx.searchable:
        return None
    for old_law in ctx.older:
        other, s_other = ctx.checker.best_in_law(ctx.quoted_norm, old_law)
        if other is not None and s_other >= max(ctx.threshold, WRONG_NUMBER) and s_other > ctx.s_best:
            note = message("statute.note.content_is_in_version", label=other.label, version=old_law.version)
            return ctx.checked("outdated_version", other, s_other, note)
    return None


@gives("content_mismatch")
def cited_article_disagrees(ctx: CheckContext) -> Checked | None:
    """The article exists, and no article of the law carries the content."""
    if ctx.art is not None:
        return Checked(ctx.citation, "content_mismatch", ctx.art, ctx.s_cited, ctx.notes)
    return None


@gives("content_mismatch")
def only_an_older_article(ctx: CheckContext) -> Checked | None:
    """Only an older version has the article, and the content does not agree with it."""
    old = _in_versions(ctx, ctx.older)
    if old is not None:
        score = ctx.checker.agreement(ctx.quoted_norm, old)
        return ctx.checked("content_mismatch", old, score, message("statute.note.only_older"))
    return None


#: Name and number only.
BARE: tuple[Rule, ...] = (
    article_without_content,
    number_only_in_older_version,
    number_only_in_later_version,
    no_such_article,
)
#: Content quoted or stated.
QUOTED: tuple[Rule, ...] = (
    reads_otherwise,
    older_words,
    cited_article_agrees,
    later_version_agrees,
    older_version_agrees,
    other_article,
    other_article_of_older_version,
    cited_article_disagrees,
    only_an_older_article,
    no_such_article,
)


# -- 4. afterwards: the date --------------------------------------------------------------------


@gives("no_content")
def not_judged_on_later_text(ctx: CheckContext, checked: Checked) -> Checked:
    """Against a later text than the one in force that day, a mismatch or a renumbering says nothing: the
    citation cannot be judged (刑法 of 2017 against the 2020 text); other verdicts carry the note."""
    if not ctx.dated_note:
        return checked
    if checked.verdict in UNJUDGED_ON_LATER_TEXT:
        return ctx.checked(
            "no_content", None, None, message("statute.note.not_judged", reason=ctx.dated_note)
        )
    checked.notes = (*checked.notes, ctx.dated_note)
    return checked


@gives("amended_since")
def amended_since(ctx: CheckContext, checked: Checked) -> Checked:
    """Verified against an earlier version than today's, and the article has changed (or gone) since."""
    versions = ctx.versions
    if checked.verdict != "verified" or ctx.reference is versions[0]:
        return checked
    now = ctx.db.article(versions[0], ctx.citation.article, ctx.citation.suffix)
    if now is None or ctx.checker.article_norm(now) != ctx.checker.article_norm(checked.matched):
        if ctx.named is not None:
            when = message("statute.note.when_named", named=ctx.citation.resolution.version_named)
        elif ctx.dated_note:
            when = message("statute.note.when_oldest", day=ctx.as_of)
        else:
            when = message("statute.note.when_in_force", day=ctx.as_of)
        change = "statute.note.amended_in" if now is not None else "statute.note.no_longer_in"
        checked.verdict = "amended_since"
        checked.notes = (
            message(change, version=ctx.reference.version, when=when, current=versions[0].version),
        )
    return checked


AFTERWARDS: tuple[Callable[[CheckContext, Checked], Checked], ...] = (not_judged_on_later_text, amended_since)

#: Every rule, in the order they are tried (:data:`BARE` and :data:`QUOTED` share :func:`no_such_article`).
RULES: tuple[Callable, ...] = tuple(dict.fromkeys((*THE_LAW, *THE_VERSION, *BARE, *QUOTED, *AFTERWARDS)))
#: The rules that may give each verdict (``tests/test_verdicts.py``: every verdict of the table has one).
RULES_OF: dict[str, tuple[Callable, ...]] = {
    code: tuple(rule for rule in RULES if code in rule.verdicts)  # type: ignore[attr-defined]
    for code in dict.fromkeys(code for rule in RULES for code in rule.verdicts)  # type: ignore[attr-defined]
}


def judge(ctx: CheckContext) -> Checked:
    """The verdict of one citation: the stages of the module docstring, in order."""
    checked = _first(THE_LAW, ctx)
    if checked is not None:
        return checked
    pick_version(ctx)
    checked = _first(THE_VERSION, ctx)
    if checked is not None:
        return checked
    measure(ctx)
    checked = _first(QUOTED if ctx.quoted_norm else BARE, ctx)
    for revise in AFTERWARDS:
        checked = revise(ctx, checked)
    return checked
