"""The answer-style negative control: real articles cited in the forms answers use (:func:`_cite`), inside
the sentences of real answers that cite nothing."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..database import Article, Law, StatuteDB
from ..names import civil_code_part_of
from ..numerals import chinese_to_int, int_to_chinese
from .common import (
    _N,
    ANSWER_ROWS,
    LAWYER_LLAMA_FILE,
    MIN_QUOTE,
    PRC,
    _expected,
    contained,
    negative_row,
    plain,
)

# -- answer style --------------------------------------------------------------------------------

_LAWS_ENTRY = re.compile(
    rf"^《(?P<name>[^》]+)》(?P<label>第(?P<num>{_N})条(?:之(?P<suf>{_N}))?)[：:]\s*(?P<text>.+)$", re.S
)
_CITING = re.compile(r"第.{1,10}条|《|》|民法典|法律规定|规定|法条|条款")
_SENTENCE = re.compile(r"[^。！？\n]+[。！？]?")


@dataclass
class Source:
    """A real article, as the pool of public articles holds it."""

    article: Article
    written: str = ""  # the law's name as the source wrote it

    @property
    def key(self) -> str:
        return self.article.law.key


def paragraphs(article_text: str) -> list[str]:
    """The 款 of an article: its lines, each item line ``（一）…`` joined to the 款 it belongs to.

    >>> paragraphs("有下列情形之一的：\\n（一）甲；\\n（二）乙。\\n前款规定。")
    ['有下列情形之一的：\\n（一）甲；\\n（二）乙。', '前款规定。']
    """
    out: list[str] = []
    for line in article_text.split("\n"):
        if out and re.match(r"^\s*[（(][一二三四五六七八九十]+[)）]", line):
            out[-1] += "\n" + line
        elif line.strip():
            out.append(line)
    return out


def sentences(text: str) -> list[str]:
    return [s for s in (m.group().strip() for m in _SENTENCE.finditer(text)) if s]


def _part(rng: random.Random, text: str) -> str:
    """A contiguous part of an article for a quote: all of it, one 款, or one sentence of some length."""
    choice = rng.random()
    paras = paragraphs(text)
    if choice < 0.4 or len(paras) == 1 and len(sentences(text)) == 1:
        return text
    if choice < 0.7 and len(paras) > 1:
        return rng.choice(paras)
    long = [s for s in sentences(text) if len(plain(s)) >= MIN_QUOTE]
    return rng.choice(long) if long else text


def _short(law: Law) -> str:
    return law.name[len(PRC) :] if law.name.startswith(PRC) else law.name


def _cn(n: int, suffix: int = 0) -> str:
    return int_to_chinese(n) + (f"条之{int_to_chinese(suffix)}" if suffix else "条")


def _ar(n: int, suffix: int = 0) -> str:
    return f"{n}" + (f"条之{int_to_chinese(suffix)}" if suffix else "条")


def _cite(
    rng: random.Random,
    law: Law,
    number: int,
    suffix: int,
    quote: str | None,
    *,
    part: str | None = None,
    forms: tuple[str, ...] | None = None,
) -> tuple[str, str]:
    """A citation of ``law`` art. ``number`` in one of the forms answers use, with ``quote`` (or none)."""
    full, short = (n.replace("《", "〈").replace("》", "〉") for n in (law.name, _short(law)))
    book = civil_code_part_of(number) if law.key == "民法典" else None
    if quote is None:
        bare = (
            "具体可参见《{s}》第{c}的相关规定。",
            "这一点在《{f}》第{c}中有明确规定。",
            "可以依据{s}第{a}主张权利。",
            "相关依据为《{s}》第{c}。",
        )
        form = rng.choice(bare)
        return "bare", form.format(s=short, f=full, c=_cn(number, suffix), a=_ar(number, suffix))
    q = quote.strip()
    options = {
        "colon": f"《{short}》第{_cn(number, suffix)}：{q}",
        "quoted": f"根据《{full}》第{_cn(number, suffix)}规定：“{q}”",
        "arabic": f"《{short}》第{_ar(number, suffix)}规定，{q}",
        "book": f"《{short}》{book}第{_cn(number, suffix)}规定：{q}"
        if book
        else f"《{full}》第{_ar(number, suffix)}规定：{q}",
        "paragraph": f"《{full}》第{_cn(number, suffix)}第{int_to_chinese(_paragraph_no(part, q))}款规定：“{q}”"
        if part is not None and _paragraph_no(part, q)
        else f"依据《{short}》第{_cn(number, suffix)}：“{q}”",
        "unbracketed": f"{short}第{_ar(number, suffix)}明确规定：“{q}”",
    }
    name = rng.choice(forms or tuple(options))
    return name, options[name]


def _paragraph_no(article_text: str | None, quote: str) -> int | None:
    if article_text is None:
        return None
    paras = paragraphs(article_text)
    if len(paras) < 2:
        return None
    for i, p in enumerate(paras, 1):
        if p.strip() == quote.strip():
            return i
    return None


def _plain_sentences(response: str) -> list[str]:
    return [s for s in sentences(response) if not _CITING.search(s) and len(s) >= 8]


def negative_answer(
    db: StatuteDB, counsel_rows: list[dict], rng: random.Random
) -> tuple[list[dict], dict, set[int]]:
    """Rows of the answer style; also the indices of the lawyer-llama rows used (the positive control
    takes its prose from the others)."""
    stats = {
        "consultations": len(counsel_rows),
        "laws_entries": 0,
        "entries_real": 0,
        "entries_kept": 0,
        "rows": 0,
        "expected": 0,
    }
    usable: list[tuple[int, list[tuple[Source, str]]]] = []
    for i, row in enumerate(counsel_rows):
        kept = []
        for entry in row.get("laws") or []:
            stats["laws_entries"] += 1
            m = _LAWS_ENTRY.match(entry.strip())
            if not m:
                continue
            res = db.resolve(m.group("name"))
            if res.key is None or res.repeal is not None:
                continue
            number = chinese_to_int(m.group("num"))
            suffix = chinese_to_int(m.group("suf")) if m.group("suf") else 0
            art = db.article(db.current(res.key), number, suffix)
            if art is None or not contained(m.group("text"), art.text):
                continue
            if any(s.article is art for s, _e in kept):
                continue
            kept.append((Source(art, m.group("name")), entry.strip()))
        stats["entries_real"] += len(kept)  # entries whose article exists and whose text is its text
        if kept:
            usable.append((i, kept))
    chosen = sorted(rng.sample(range(len(usable)), min(ANSWER_ROWS, len(usable))))
    rows, used = [], set()
    for c in chosen:
        i, kept = usable[c]
        used.add(i)
        prose = _plain_sentences(counsel_rows[i].get("response", ""))
        paras, expected = [], {}
        if prose:
            paras.append("".join(prose[:2]))
        bare_list = len(kept) >= 2 and rng.random() < 0.3
        for j, (src, entry) in enumerate(kept):
            art = src.article
            stats["entries_kept"] += 1  # entries of the rows drawn
            if bare_list and j == len(kept) - 1:
                continue
            if rng.random() < 0.15:
                form, cite = _cite(rng, art.law, art.number, art.suffix, None)
                verdict = "no_content"
            elif rng.random() < 0.25:
                form, cite, verdict = "laws_field", entry, "verified"
            else:
                part = _part(rng, art.text)
                form, cite = _cite(rng, art.law, art.number, art.suffix, part, part=art.text)
                verdict = "verified"
            paras.append(cite)
            _add(expected, src, verdict, form)
        if bare_list:
            a, b = kept[-2][0].article, kept[-1][0].article
            paras.append(
                f"此外，《{_short(a.law)}》第{_cn(a.number, a.suffix)}、第{_cn(b.number, b.suffix)}也与您的问题相关。"
            )
            _add(expected, kept[-2][0], "no_content", "bare_list")
            _add(expected, kept[-1][0], "no_content", "bare_list")
        if len(prose) > 2:
            paras.append(prose[-1])
        source = {
            "file": counsel_rows[i].get("_file", LAWYER_LLAMA_FILE),
            "line": counsel_rows[i].get("_line", i + 1),
        }
        rows.append(
            negative_row(len(rows) + 1, "answer", "\n".join(paras), None, list(expected.values()), [], source)
        )
        stats["expected"] += len(expected)
    stats["rows"] = len(rows)
    return rows, stats, used


def _add(expected: dict, src: Source, verdict: str, form: str) -> None:
    art = src.article
    ident = (art.law.key, art.number, art.suffix)
    old = expected.get(ident)
    if old is None:
        expected[ident] = _expected(
            art.law.name, art.law.key, art.number, art.suffix, "not_hallucinated", verdict, forms=[form]
        )
    else:
        old["forms"].append(form)
        if verdict == "verified":
            old["verdict"] = "verified"
