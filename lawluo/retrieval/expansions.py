"""Document expansion for statute search: questions that real consultations answered with an article.

Clients do not write like statutes (``开车时手里夹着烟被电子眼抓拍`` vs ``驾驶机动车不得有下列行为``).
Following doc2query (Nogueira et al., 2019, "Document Expansion by Query Prediction") we append to
each article the questions that training data answered with it, so BM25 can match the client's
words. Sources (all in ``../shared/data``; none is a benchmark we report on, and every question that
shares more than half of its character 6-grams with a question of the LawBench dev sets is dropped):

- lawyer-llama ``legal_counsel_with_article_v2``, ``legal_counsel_multi_turn_with_article_v2``,
  ``zixun_gpt4.dev``: questions with the articles given to the lawyer;
- LawLuo KINLED ``consult_995``, ``exam_985``, ``judicial_interp_4382``, ``term_qa_3125``: questions
  whose answers (or, for judicial-interpretation dialogues, questions) cite articles;
- CAIL2018 facts (LawBench 3-1) with their 刑法 article; DISC-Law ``qa_short_answer`` inputs whose
  outputs cite articles.

Citations are resolved with the project's own checker; a citation counts when its verdict is not
hallucinated (verified/amended_since/no_content: the article as cited) or when the checker found the
article the content really belongs to (wrong number, older version, repealed law's successor).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

from ..law.checker import CitationChecker
from ..law.database import StatuteDB
from ..law.verdicts import NOT_HALLUCINATED

_CITED_IN_QUESTION = re.compile(r"根据《[^》]*》第[^，,]*条[的规定]*[，,]?")


def query_text(question: str) -> str:
    """The question without a ``根据《…》第…条`` citation (kept whole when nothing else would remain).

    >>> query_text("根据《中华人民共和国商标法》第六条，未注册的商品能卖吗？")
    '未注册的商品能卖吗？'
    """
    stripped = _CITED_IN_QUESTION.sub("", question).strip()
    return stripped or question


_WORD = re.compile(r"\W")


def _grams(text: str, n: int = 6) -> set[str]:
    text = _WORD.sub("", text)
    return {text[i : i + n] for i in range(len(text) - n + 1)}


def _cited(checker: CitationChecker, text: str) -> set[tuple[str, int]]:
    out = set()
    for checked in checker.check(text).citations:
        cit = checked.citation
        if checked.verdict in NOT_HALLUCINATED and cit.key:
            out.add((cit.key, cit.article))
        elif checked.matched is not None:
            out.add((checked.matched.law.key, checked.matched.number))
    return out


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _pairs(data: Path, checker: CitationChecker) -> list[tuple[str, str, str, int]]:
    """(source, question, law key, article number) for every usable question."""
    pairs: list[tuple[str, str, str, int]] = []
    for name in (
        "legal_counsel_with_article_v2",
        "legal_counsel_multi_turn_with_article_v2",
        "zixun_gpt4.dev",
    ):
        for row in _read_jsonl(data / "lawyer_llama" / f"{name}.jsonl"):
            for law in row.get("laws", []):
                pairs += [(name, row["query"], k, n) for k, n in _cited(checker, law)]
    for name in ("consult_995", "exam_985"):
        for row in json.loads((data / "lawluo_kinled" / f"{name}.json").read_text(encoding="utf-8")):
            pairs += [(name, row["question"], k, n) for k, n in _cited(checker, row["answer"])]
    for name in ("judicial_interp_4382", "term_qa_3125"):
        for row in json.loads((data / "lawluo_kinled" / f"{name}.json").read_text(encoding="utf-8")):
            question = _CITED_IN_QUESTION.sub("", row["question"])
            pairs += [
                (name, question, k, n) for k, n in _cited(checker, row["question"] + "\n" + row["answer"])
            ]
    for row in _read_jsonl(data / "lawbench" / "criminal_facts_articles.jsonl"):
        m = re.search(r"刑法第(\d+)条", row["output"])
        if m:
            fact = row["input"].split("罪名:")[0].replace("事实:", "").strip()
            pairs.append(("cail", fact[:300], "刑法", int(m.group(1))))
    for row in _read_jsonl(data / "disc" / "qa_short_answer.jsonl"):
        pairs += [("disc", row["input"][:300], k, n) for k, n in _cited(checker, row["output"])]
    return pairs


def build_expansions(data_dir: Path, db: StatuteDB) -> tuple[list[dict], dict]:
    """Questions per article, and counts for the provenance record."""
    data = Path(data_dir)
    checker = CitationChecker(db)
    dev = [
        row["question"]
        for name in ("consult", "scenario_statute", "domain_questions")
        for row in _read_jsonl(data / "lawbench" / f"{name}.dev.jsonl")
    ]
    index: dict[str, set[int]] = defaultdict(set)
    dev_grams = [_grams(q) for q in dev]
    for i, grams in enumerate(dev_grams):
        for g in grams:
            index[g].add(i)
    by_article: dict[tuple[str, int], dict[str, list[str]]] = defaultdict(
        lambda: {"questions": [], "sources": []}
    )
    stats: dict[str, int] = defaultdict(int)
    for source, question, key, number in _pairs(data, checker):
        grams = _grams(question)
        overlap: dict[int, int] = defaultdict(int)
        for g in grams:
            for i in index.get(g, ()):
                overlap[i] += 1
        if any(c / max(1, min(len(grams), len(dev_grams[i]))) > 0.5 for i, c in overlap.items()):
            stats["dropped_near_dev"] += 1
            continue
        slot = by_article[(key, number)]
        if question not in slot["questions"]:
            slot["questions"].append(question)
            slot["sources"].append(source)
            stats[source] += 1
    rows = [{"law": k, "article": n, **v} for (k, n), v in sorted(by_article.items())]
    stats["articles"] = len(rows)
    return rows, dict(stats)


def write_expansions(rows: list[dict], path: Path) -> bytes:
    """Write ``rows`` as gzip JSONL (keys sorted; no file name and mtime 0 in the gzip header, so the
    same rows give the same bytes wherever the file is written), atomically; returns the bytes."""
    from ..files import write_gzip_lines

    return write_gzip_lines(path, (json.dumps(r, ensure_ascii=False, sort_keys=True) for r in rows))


def load_expansions(path: Path) -> dict[tuple[str, int], list[str]]:
    """(law key, article number) → questions; empty when the file is absent."""
    path = Path(path)
    if not path.exists():
        return {}
    out: dict[tuple[str, int], list[str]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            out[(row["law"], int(row["article"]))] = row["questions"]
    return out
