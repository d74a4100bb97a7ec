"""Does a quote that agrees with an article change what it means? Splices and the words of legal meaning.

The checker's agreement score (:mod:`lawluo.law.checker`) is a weighted share of shared character
bigrams: it cannot see that a quote joins the subject of one clause to the penalty of another, nor that
one word of legal meaning changed. From a real model's answer (issue 40)::

    根据《道路交通安全法》第九十一条，醉酒驾驶机动车的，处暂扣六个月机动车驾驶证，并处一千元以上二千元以下罚款。

Every piece is in art. 91, but 处暂扣六个月… punishes *饮酒后* driving (its first sentence); *醉酒* driving is
约束至酒醒，吊销机动车驾驶证，依法追究刑事责任. This module reads the quote clause by clause.

1. **Anchors.** Each clause of the quote (split at ，；。：、) may be read as any clause of the article
   holding at least :data:`ANCHORED` of its bigrams and no less than :data:`SLACK` below the best one.
   Only the first run of such clauses is read — what follows a clause that matches nothing is the
   writer's own commentary.
2. **Faults of a reading.** Reading a quote clause as an article clause is a fault when
   - a **word of legal meaning** changed: the numbers (periods, amounts, ages), 以上/以下/不满/超过/以内
     and 醉酒/饮酒 of the quote clause must appear, in order, among the article clause's (a partial quote
     may leave some out, not change or reorder them); a negation (不得, 禁止, 不予, 免予, 不…) the
     article clause has may not be dropped (the article clause without it is in the quote); and the
     quote's modality (应当/必须 → must, 可以 → may, 不得/禁止 → must not) may not contradict the
     modality of the article's sentence (an added 应当 where the article has none is not a fault);
   - it is a **splice**: the quote goes on from one provision into the middle of another whose
     condition (a clause ending in 的, or the sentence's first clause) is not the quote's last condition
     read faithfully (the same clause, or one it anchors to without a fault of words: 醉酒驾驶机动车的 is not
     饮酒后驾驶机动车的).
     Within a sentence, to a sentence's start, and between a list's lead-in and its items are joins, not
     splices; a paraphrase that condenses two sentences of one rule (犯罪以后自首的，可以从轻或者减轻处罚)
     jumps into a sentence whose condition the quote does not contradict.
3. **The most charitable reading** is taken: the one with the fewest faults (Viterbi over each clause's
   anchors; ties broken by the bigram shares), and its first fault is the reason given. So a penalty
   formula that several provisions share is read in the provision the quote is in, and a quote is called
   wrong only when no reading of it is faithful.

4. **A swapped word** the clause reading cannot see (a clause too short to anchor, a negation dropped in a
   clause the article also has without it) is looked for in the article's own wording:
   :func:`swapped_word`.

A reading also has a fault when it goes back to an earlier sentence of the article (except from a list's
item to its lead-in), and when it reads a clause the article has word for word as another clause.

A quote with a fault does not state the article: the checker calls it ``content_mismatch`` and names the
fault. Thresholds were set on LawBench answers and the development controls (v1 and, from 2026-12-03, v2);
the held-out set is v3 (``benchmarks/data/checker_controls_v3``), never used to set them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A quote clause may be read as an article clause holding at least this share of its bigrams…
ANCHORED = 0.6
#: …and no less than this below the best such clause.
SLACK = 0.25
#: The article clause without a negation must be this much inside the quote clause for it to be dropped.
COVERS = 0.8
_MIN_CLAUSE = 3

_SENTENCE_SPLIT = re.compile(
    r"[。；;！？!?\n]+|(?<=[\u4e00-\u9fff])\.(?=[\u4e00-\u9fff])"
)  # 。 or a . between words
_CLAUSE_SPLIT = re.compile(r"[，,：:、]+")
_NUMERAL = "零〇一二三四五六七八九十百千万亿两"
#: A number counts when it counts something — a period, an amount, an age, a share — not in 一方 or 一并.
_KEY_TOKEN = re.compile(
    rf"应当|必须|可以|不得|禁止|严禁|醉酒|饮酒|以上|以下|不满|超过|以内|"
    rf"特别巨大|巨大|较大|特别严重|严重|较轻|特别恶劣|恶劣|"
    rf"(?:百分之)?[{_NUMERAL}]+(?=个月|个工作日|[日天月年元倍周岁人次名件辆克吨亩米小时]|分之)"
)
_MODAL = {
    "应当": "must",
    "必须": "must",
    "可以": "may",
    "不得": "must_not",
    "禁止": "must_not",
    "严禁": "must_not",
}
_MODAL_RE = re.compile("|".join(_MODAL))
_NEGATION = re.compile(r"不得|禁止|不予|免予|不(?=[\u4e00-\u9fff])")
#: A list's lead-in (有下列情形之一的，劳动合同终止：/ 享受以下待遇：（一）) joins any of its items.
_LIST_HEADER = re.compile(r"下列|如下|[：:]\s*[（(]?[一1][)）、.]")
_ITEM_START = re.compile(r"^\s*(?:[（(][一二三四五六七八九十\d]+[)）]|[一二三四五六七八九十]+、|\d+[.、])")


def _bigrams(text: str) -> frozenset[str]:
    return frozenset(text[i : i + 2] for i in range(len(text) - 1)) if len(text) > 1 else frozenset({text})


def _key_tokens(clause: str) -> list[str]:
    """The clause's words of legal meaning, in order (modality as must/may/must_not; 两 written 二).

    >>> _key_tokens("处五日以上十日以下拘留，并处两千元以下罚款；一方应当")
    ['五', '以上', '十', '以下', '二千', '以下', 'must']
    """
    out = []
    for m in _KEY_TOKEN.finditer(clause):
        token = m.group()
        out.append(_MODAL.get(token, token.replace("两", "二")))
    return out


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(token in it for token in small)


@dataclass(frozen=True)
class _Clause:
    sentence: int
    position: int  # the clause's place in its sentence; 0 begins it
    header: bool  # its sentence leads in a list (下列情形)
    item: bool  # its sentence is an item of a list (（一）…)
    text: str
    grams: frozenset[str]  # of the text without its modal words: what anchoring compares

    @property
    def condition(self) -> bool:
        return self.text.endswith("的")


@dataclass(frozen=True)
class Article:
    """An article read for :func:`conflict`: its clauses, and each sentence's text."""

    clauses: tuple[_Clause, ...]
    sentences: tuple[str, ...]


def clauses(text: str, normalise) -> Article:
    """``text`` cut into clauses, each normalised with ``normalise`` (the checker's), with its sentence."""
    out, sentences = [], []
    for s, sentence in enumerate(_SENTENCE_SPLIT.split(text)):
        sentences.append(normalise(sentence))
        position = 0
        header = bool(_LIST_HEADER.search(sentence))
        item = bool(_ITEM_START.match(sentence))
        for raw in _CLAUSE_SPLIT.split(sentence):
            norm = normalise(raw)
            if len(norm) >= _MIN_CLAUSE:
                grams = _bigrams(_MODAL_RE.sub("", norm) or norm)
                out.append(_Clause(s, position, header, item, norm, grams))
                position += 1
    return Article(tuple(out), tuple(sentences))


def _share(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a) if a else 0.0


def _joins(previous: _Clause, target: _Clause) -> bool:
    """Within a sentence, to the start of a sentence, or from a list's lead-in into one of its items (an item
    joins the next item only at its start: （二）'s condition with （三）'s penalty is a splice), or back from
    an item to its lead-in."""
    return (
        target.sentence == previous.sentence
        or target.position == 0
        or (previous.header and target.item)
        or (
            previous.item and target.header
        )  # 具有“（一）…的”，属于“…”，处…: an item, then what its list provides
    )


def _word_fault(clause: _Clause, target: _Clause, article: Article) -> str:
    """A word of legal meaning that reading ``clause`` as ``target`` changes, or ''."""
    tokens = [t for t in _key_tokens(clause.text) if t not in ("must", "may", "must_not")]
    if not _is_subsequence(tokens, _key_tokens(target.text)):
        return f"“{clause.text}” changes the article's words of legal meaning (the article: “{target.text}”)"
    quote = _bigrams(clause.text)
    for negation in set(_NEGATION.findall(target.text)) - set(_NEGATION.findall(clause.text)):
        without = target.text.replace(negation, "", 1)
        if without and _share(_bigrams(without), quote) >= COVERS:
            return f"“{clause.text}” drops {negation} (the article: “{target.text}”)"
    said = {_MODAL[m] for m in _MODAL_RE.findall(clause.text)}
    provided = {_MODAL[m] for m in _MODAL_RE.findall(article.sentences[target.sentence])}
    if said and provided and not said & provided:
        return f"“{clause.text}” says {'/'.join(sorted(said))} where the article says {'/'.join(sorted(provided))}"
    return ""


def _splice_fault(clause: _Clause, target: _Clause, previous: _Clause, condition, article: Article) -> str:
    if clause.condition or _joins(previous, target) or condition is None:
        return ""
    cond_clause, cond_target = condition
    if cond_target.sentence == target.sentence:
        return ""
    own = [c for c in article.clauses if c.sentence == target.sentence and (c.condition or c.position == 0)]
    comparable = [c for c in own if _share(cond_clause.grams, c.grams) >= ANCHORED]
    faithful = [
        c
        for c in comparable
        if c == cond_target
        or (
            min(_share(cond_clause.grams, c.grams), _share(c.grams, cond_clause.grams)) >= COVERS
            and not _word_fault(cond_clause, c, article)
        )
    ]
    if faithful:  # the provision's condition is the quote's, read faithfully…
        subject = next((c for c in own if c.position == 0), None)
        if subject is None or subject in faithful or subject.header or subject.item:
            return ""
        if _share(cond_clause.grams, subject.grams) >= ANCHORED:
            return ""
        # …but the provision has a subject of its own (故意制作、传播计算机病毒…，后果严重的，依照第一款的规定处罚
        # after 款一's 违反国家规定…，后果严重的): its consequence is not the quote's subject's.
        return f"spliced: “{clause.text}” is what the article provides for “{subject.text}…”, not for the quote's subject"
    # A splice: the provision has a condition of its own (…的), or one the quote's contradicts
    # (具有…情节的 against 虽然不具有…情节); a first clause unlike the quote's (对于自首的犯罪分子) is not one.
    if comparable or any(c.condition for c in own):
        shown = (comparable or [c for c in own if c.condition])[0]
        return f"spliced: “{clause.text}” is what the article provides for “{shown.text}”, not for “{cond_clause.text}”"
    return ""


def _backward_fault(clause: _Clause, target: _Clause, previous: _Clause) -> str:
    """A faithful quote keeps the article's order: reading on in an earlier sentence (款三's condition with
    款一's consequence) joins what the article keeps apart."""
    if target.sentence < previous.sentence and not (previous.item and target.header):
        return f"“{clause.text}” comes before “{previous.text}” in the article"
    return ""


def _jump_fault(clause: _Clause, target: _Clause, previous: _Clause, anchors) -> str:
    """Reading the clause in the middle of another provision when it has a reading in the provision the
    quote is in: the quote changed that provision (不得 dropped, 应当 for 可以) and borrows the wording."""
    if _joins(previous, target):
        return ""
    if any(t.sentence == previous.sentence for _s, t in anchors):
        return f"“{clause.text}” is not what the provision it continues says (the article: “{target.text}”)"
    return ""


#: One word of legal meaning put for another (or a negation dropped) in the article's own wording:
#: :func:`swapped_word` looks for the article's text around the word with the other word in its place.
SWAPS: dict[str, tuple[str, ...]] = {
    "应当": ("可以",),
    "必须": ("可以",),
    "可以": ("应当", "必须"),
    "以上": ("以下",),
    "以下": ("以上",),
    "醉酒": ("饮酒",),
    "饮酒": ("醉酒",),
    "不得": ("",),
    "禁止": ("",),
    "不予": ("",),
}
_SWAP_RE = re.compile("|".join(SWAPS))
#: Characters of the article's text kept on each side of the word (the longer side; the shorter has 2).
CONTEXT = 6


def swapped_word(quoted: str, article_text: str) -> str:
    """A word of legal meaning the quote changed inside the article's own words, or ''.

    Both are normalised texts. The quote has the article's text around an occurrence of a word (应当, 不得,
    醉酒…) with the word swapped for its partner or, for a negation, dropped — and the article has that
    changed text nowhere. Exact: a faithful quote never contains such a string, and a paraphrase only
    when it changed that very word within the article's wording.

    >>> swapped_word("监护人被指定后擅自变更", "监护人被指定后不得擅自变更擅自变更的不免除责任")
    '“…护人被指定后擅自…” drops 不得 (the article: “…护人被指定后不得擅自…”)'
    >>> swapped_word("分割遗产应当清偿被继承人的债务", "分割遗产应当清偿被继承人的债务")
    ''
    """
    for m in _SWAP_RE.finditer(article_text):
        word, at, end = m.group(), m.start(), m.end()
        left, right = article_text[max(0, at - CONTEXT) : at], article_text[end : end + CONTEXT]
        for other in SWAPS[word]:
            if other:
                shapes = [(left, right[:2]), (left[-2:], right), (left, ""), ("", right)]
            else:  # a dropped negation needs the article's text on both sides
                shapes = [(left, right[:2]), (left[-2:], right), (left[-4:], right[:4])]
            for before, after in shapes:
                changed = before + other + after
                if len(changed) - len(other) < CONTEXT or changed not in quoted or changed in article_text:
                    continue
                what = f"has {other} for {word}" if other else f"drops {word}"
                return f"“…{changed}…” {what} (the article: “…{before}{word}{after}…”)"
    return ""


def conflict(quoted: str, article: Article, normalise) -> str:
    """Why the quote does not state the article (a splice, a changed word of legal meaning), or ''.

    ``article`` is :func:`clauses` of the article's text.
    """
    run: list[tuple[_Clause, list[tuple[float, _Clause]]]] = []
    for clause in clauses(quoted, normalise).clauses:
        shares = [(_share(clause.grams, t.grams), t) for t in article.clauses]
        best = max((sh for sh, _t in shares), default=0.0)
        if best < ANCHORED:
            if run:
                break  # the quote has ended; the writer's own words follow
            continue
        run.append((clause, [(sh, t) for sh, t in shares if sh >= max(ANCHORED, best - SLACK)]))
    if not run:
        return swapped_word(normalise(quoted), "".join(article.sentences))
    # Viterbi: state = (anchor, the quote's last condition and its anchor); cost = (faults, -shares).
    paths: dict = {(None, None): ((0, 0.0), [])}
    for clause, anchors in run:
        words = {t: _word_fault(clause, t, article) for _s, t in anchors}  # the same from every state
        same = next((t for sh, t in anchors if sh == 1.0 and _share(t.grams, clause.grams) >= COVERS), None)
        if same is not None:  # the clause is the article's own words there: read elsewhere it is changed
            for sh, t in anchors:
                if sh < COVERS and not words[t]:
                    words[t] = f"“{clause.text}” is the article's “{same.text}”, not “{t.text}”"
        nxt: dict = {}
        for (previous, condition), (cost, faults) in paths.items():
            for share, t in anchors:
                fault = words[t] or (
                    previous is not None
                    and (
                        _splice_fault(clause, t, previous, condition, article)
                        or _jump_fault(clause, t, previous, anchors)
                        or _backward_fault(clause, t, previous)
                    )
                )
                new_condition = (clause, t) if clause.condition else condition
                new_cost = (cost[0] + bool(fault), cost[1] - share)
                key = (t, new_condition)
                if key not in nxt or new_cost < nxt[key][0]:
                    nxt[key] = (new_cost, faults + [fault] if fault else faults)
        paths = nxt
    _cost, faults = min(paths.values(), key=lambda v: v[0])
    # the clause-by-clause reading names the fault best; a swap it cannot see (a clause too short to
    # anchor, 不得 dropped before 假释) is looked for in the article's own wording
    return faults[0] if faults else swapped_word(normalise(quoted), "".join(article.sentences))
