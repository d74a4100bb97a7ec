"""(question, cited article) pairs mined from ``../shared/data``: ``python -m lawluo build supervision``.

Writes ``assets/supervision.jsonl.gz`` (one object a line: ``id, source, question, articles, group, eval``)
and ``assets/supervision.PROVENANCE.md``. Each source (:data:`SOURCES`) gives a question and the text its
articles are read from; every citation in that text is read by the :class:`~lawluo.law.checker.CitationChecker`
and canonicalised by :func:`canonical` to ``[law key, article number]`` of the law in force:

- the cited article when it exists in the current version (``verified``, ``no_content``,
  ``content_mismatch``: the answer named it, whatever its quote says);
- the article the quoted content really is (``wrong_number``: e.g. an old numbering);
- a repealed law's successor article when the quote agrees with one (合同法 art. 107 → 民法典 art. 577);
- an older version's article mapped by its text to the current version (``outdated_version``);
- anything else (unknown law or article, a repealed law without content) is dropped and counted.

**Deduplication.** Questions are normalised (:func:`normalise_question`: letters, digits and CJK only) and
cut into character 3-gram shingles; two questions are near duplicates when the Jaccard similarity of their
shingles is at least :data:`DUPLICATE` (0.8), computed exactly with a sparse product. Clusters of near
duplicates (connected components) keep one row, the first in source order, with the union of the
cluster's articles; except that a cluster with evaluation questions keeps every one of them unchanged
(near-identical LawBench scenarios can cite different articles: gold answers never change) and drops its
training rows.

**Evaluation groups.** Every LawBench dev question (3-2 scenario, 3-8 consultation; never a test half) is
an evaluation question, ``eval: true``, with ``group`` = its own id. A training row whose shingle Jaccard
with an evaluation question is at least :data:`RELATED` (0.5) takes the group of the most similar one
(ties: the first in file order); every other row is its own group. Grouped cross-validation
(``GroupKFold`` on ``group``) thus never trains on a paraphrase of a question it evaluates.

**Everyday questions** (:data:`LAY_SETS`, issue 39 item 2). The fresh lay sets 1–4 of ``benchmarks/data``
(384 everyday questions, 24 per domain) and, since session 36, the lay training sets 1–4 (335 more, written in
four styles: terse, rambling, plain, for someone else), each labelled with the articles a lawyer would cite by
one rule and frozen by sha256, join as evaluation rows of source ``lawluo_lay``: like the LawBench rows they
are never in the expansions, the vote index, the law prior or the hub reference, and they are what the query
adapter, the fused reranker and the relevance learn from beside them — the supervision's only clean pairs of
the questions the app gets (the consultations cite a few family-law hubs hundreds of times). Chosen leave one
set out (``benchmarks/lay_training_rows.py``) and decided on fresh5; the training sets decided on fresh7.
fresh5 and every later fresh set stay out (``benchmarks/data/README.md``); the training sets 5–8, which fresh8 refused, are development
data (:data:`DEV_LAY_SETS`). A set whose bytes changed since it was frozen stops the build.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..files import asset_summary, rebuild_section, write_gzip_lines
from ..law.checker import WRONG_NUMBER, Checked, CitationChecker, normalise

FILENAME = "supervision.jsonl.gz"
PROVENANCE_FILENAME = "supervision.PROVENANCE.md"
REBUILD_COMMAND = "python -m lawluo build supervision --data ../shared/data"
DUPLICATE = 0.8
RELATED = 0.5
SHINGLE = 3
MAX_QUESTION = 500  # characters kept of a question (DISC case facts run to thousands)

_LL = "AndrewZhe/lawyer-llama @ abaa095"
_LL_TERMS = "Apache-2.0; README: academic research only"
_KINLED = "NEFUJing/LawLuo @ 562fbe3"
_KINLED_TERMS = "no licence file; the authors state academic use only"
_LB = "open-compass/LawBench @ e30981b"
_LB_TERMS = "Apache-2.0 repo; upstream data terms apply"

#: The source of the everyday questions of :data:`LAY_SETS`.
LAY_SOURCE = "lawluo_lay"
#: The repository's folder of :data:`LAY_SETS`.
LAY_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
#: The lay sets learned from (file in :data:`LAY_DIR` → sha256 when it was frozen): the fresh lay sets 1–4
#: (session 35; fresh5 decided whether they are) and the training sets 1–4 written in four styles in session 36
#: (terse, rambling, plain, for someone else; those sharing over 25 % of their bigrams with a held-out question
#: dropped; fresh7 decided whether they are). fresh5 and the later fresh sets are never among them
#: (``benchmarks/data/README.md``).
LAY_SETS = {
    "lay_questions.fresh1.jsonl": "f38a645cb2e9635d13d9d0dd4fb1d1542a04e9a78715f38679e43ce1001444d1",
    "lay_questions.fresh2.jsonl": "43de757916290fb26eeeb2b6c28a342dcf98437d6a80d3427b1d566ae66774f1",
    "lay_questions.fresh3.jsonl": "9c0b7cfd9b2a2e146392686283298002881f1d785d68fe33af3420a45ca0e6c6",
    "lay_questions.fresh4.jsonl": "26ce72218d5c965ac61583143503297c30003b1b912e6824e397d2bd96030a3f",
    "lay_questions.train1.jsonl": "891da1ae1502f241f8c60ec6afd4f871dfb4b1e88429c55a231d7fc9a0e6e924",
    "lay_questions.train2.jsonl": "ef3caf9750124c4869a5b1012b572814a23e3b7c8c4708bc33584a22cf7c3276",
    "lay_questions.train3.jsonl": "23bfc6dc3e36f5ec1a194d088f7d2aacf9e6585ac1dc50e6b1dc43d2e5da5145",
    "lay_questions.train4.jsonl": "ade394bb01ec4ab4a214b95eb3ff2c5d5b9605d6f8bd2114396e59d69910fa43",
}
#: Labelled everyday questions that nothing learns from (file in :data:`LAY_DIR` → sha256): the training sets 5–8
#: of session 37 (phone chat, the other side of the story, general rules of the 民法典, older and rural people),
#: which fresh8 refused as training rows (``benchmarks/data/README.md``). They are development data: a change to
#: the search is tried on them (``python benchmarks/retrieval_fresh.py --set dev``) so that no fresh set is spent
#: on a trial; once anything is chosen on them they may never be called held out.
DEV_LAY_SETS = {
    "lay_questions.train5.jsonl": "49c31850ea8dbdc97f467f86155130b897b31b08b2ae7a450f9cb752ef40950b",
    "lay_questions.train6.jsonl": "5034746a9d2807f257f8e28553b8a356f5af7bf677e326c844745a6f64c45807",
    "lay_questions.train7.jsonl": "013bf6f09d5270cbe3a253b8c78343ed88079994681711aed001418c7fc88882",
    "lay_questions.train8.jsonl": "bd02aef6804ea67611e804045ae6a09d040b161482577248632d68ed54e99ebb",
}

#: name → (file under the data folder, upstream, licence, how the articles are read, evaluation?)
SOURCES = {
    "lawbench_scenario": (
        "lawbench/scenario_statute.dev.jsonl",
        _LB + " `3-2` dev",
        _LB_TERMS,
        "reference",
        True,
    ),
    "lawbench_consult": ("lawbench/consult.dev.jsonl", _LB + " `3-8` dev", _LB_TERMS, "reference", True),
    "lawyer_llama_single_turn": (
        "lawyer_llama/legal_counsel_with_article_v2.jsonl",
        _LL,
        _LL_TERMS,
        "`laws` given with the answer",
        False,
    ),
    "lawyer_llama_multi_turn": (
        "lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl",
        _LL,
        _LL_TERMS,
        "`laws` given with the dialogue (question: the first client turn)",
        False,
    ),
    "lawyer_llama_zixun": (
        "lawyer_llama/zixun_gpt4.dev.jsonl",
        _LL + " `zixun_gpt4` dev half",
        _LL_TERMS,
        "the 民法典 articles given to GPT-4 that its answer cites",
        False,
    ),
    "lawyer_llama_advice": ("lawyer_llama/legal_advice.jsonl", _LL, _LL_TERMS, "the answer", False),
    "kinled_consult": ("lawluo_kinled/consult_995.json", _KINLED, _KINLED_TERMS, "the answer", False),
    "kinled_interpretation": (
        "lawluo_kinled/judicial_interp_4382.json",
        _KINLED,
        _KINLED_TERMS,
        "the question and answer (the question names its article)",
        False,
    ),
    "disc": (
        "disc/qa_short_answer.jsonl",
        "FudanDISC/DISC-LawLLM @ f40d023",
        "Apache-2.0",
        "the reference output",
        False,
    ),
}


@dataclass
class Pair:
    """One question with its canonical articles."""

    id: str
    source: str
    question: str
    articles: list[tuple[str, int]]
    eval: bool = False
    group: str = ""
    merged: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "source": self.source,
            "question": self.question,
            "articles": [list(a) for a in self.articles],
            "group": self.group,
            "eval": self.eval,
        }


# -- canonical articles -----------------------------------------------------------------------------
def canonical(checked: Checked, checker: CitationChecker) -> tuple[str, int] | None:
    """``(law key, article number)`` in the law in force for a checked citation, or ``None`` (also for
    a text the database numbers 0, such as an interpretation's preamble: no article to retrieve).

    >>> # 《合同法》第一百零七条 quoting its text → ('民法典', 577); 《民法典》第一千零七十九条 → ('民法典', 1079)
    """
    found = _canonical(checked, checker)
    return found if found is not None and found[1] >= 1 else None


def _canonical(checked: Checked, checker: CitationChecker) -> tuple[str, int] | None:
    db = checker.db
    art = checked.matched
    if art is None:
        return None
    if art.law.is_current:
        return (art.law.key, art.number)
    current = db.current(art.law.key)
    if current is None:
        return None
    same = db.article(current, art.number, art.suffix)
    if checked.verdict in ("no_content", "content_mismatch") and same is not None:
        return (current.key, same.number)
    best, score = checker.best_in_law(normalise(art.text), current)
    if best is not None and score >= WRONG_NUMBER:
        return (current.key, best.number)
    return None


#: A revision note inside a law's title (《中华人民共和国商标法(2019修正)》 in the KINLED interpretations),
#: which the database's names do not carry: dropped, so the title resolves to the law (in force).
_REVISION = re.compile(r"[(（]\d{4}(?:年)?(?:修正|修订|修改)?[)）](?=》)")


def read_articles(text: str, checker: CitationChecker, stats: Counter, source: str) -> list[tuple[str, int]]:
    """The canonical articles cited in ``text``, in order of first citation; unresolved ones are counted.

    A revision note in a title (``(2019修正)``) is dropped first: the article is read in the law in force."""
    out: list[tuple[str, int]] = []
    for c in checker.check(_REVISION.sub("", text)).citations:
        key = canonical(c, checker)
        if key is None:
            stats[f"unresolved:{source}"] += 1
        elif key not in out:
            out.append(key)
    return out


# -- reading the sources ----------------------------------------------------------------------------
def _rows(path: Path) -> Iterator[dict]:
    if path.suffix == ".json":
        rows = json.loads(path.read_text(encoding="utf-8"))
    else:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        row = row[0] if isinstance(row, list) and row else row  # legal_advice: one-row lists
        if isinstance(row, dict):
            yield row


def _question_and_texts(source: str, row: dict) -> tuple[str, list[str]]:
    """The question and the texts whose citations are its articles."""
    if source.startswith("lawbench"):
        return row.get("question", ""), [row.get("reference", "")]
    if source in ("lawyer_llama_single_turn", "lawyer_llama_multi_turn"):
        return row.get("query", ""), [str(law) for law in row.get("laws") or ()]
    if source == "lawyer_llama_zixun":
        return row.get("query", ""), [row.get("response", "")]
    if source == "lawyer_llama_advice":
        return row.get("instruction", ""), [row.get("output", "")]
    if source == "kinled_interpretation":
        return row.get("question", ""), [row.get("question", "") + "\n" + row.get("answer", "")]
    if source == "disc":
        return row.get("input", ""), [row.get("output", "")]
    return row.get("question", ""), [row.get("answer", "")]


def read_pairs(data_dir: Path, checker: CitationChecker, stats: Counter) -> list[Pair]:
    """Every question of :data:`SOURCES` with at least one canonical article, in source and file order."""
    data_dir = Path(data_dir)
    missing = [f for f, *_ in SOURCES.values() if not (data_dir / f).exists()]
    if missing:
        raise FileNotFoundError(
            f"{data_dir}: missing {', '.join(missing)} / 缺少数据文件 (see {REBUILD_COMMAND!r})"
        )
    pairs = []
    for source, (name, *_rest, is_eval) in SOURCES.items():
        for i, row in enumerate(_rows(data_dir / name)):
            question, texts = _question_and_texts(source, row)
            question = str(question).strip()
            stats[f"records:{source}"] += 1
            if not question:
                continue
            articles: list[tuple[str, int]] = []
            for text in texts:
                for key in read_articles(str(text), checker, stats, source):
                    if key not in articles:
                        articles.append(key)
            if source == "lawyer_llama_zixun":  # only the given 民法典 articles the answer used
                given = read_articles(
                    "\n".join(str(x) for x in row.get("laws") or ()), checker, Counter(), source
                )
                articles = [a for a in articles if a in given]
            if not articles:
                stats[f"no articles:{source}"] += 1
                continue
            pid = str(row.get("id") or f"{source}#{i}")
            pairs.append(Pair(pid, source, question[:MAX_QUESTION], articles, eval=is_eval))
    return pairs


def without_lay(rows: Iterable[Mapping]) -> list[Mapping]:
    """``rows`` without the everyday questions of :data:`LAY_SETS`: what a script that scores on the fresh lay
    sets, or measures the LawBench rows alone, must learn from (their figures predate the lay rows)."""
    return [r for r in rows if r.get("source") != LAY_SOURCE]


def read_frozen(path: Path, sha256: str) -> bytes:
    """The bytes of ``path``, refused (``ValueError``) unless their sha256 is the one it was frozen with: labels
    edited after the fact would train, or score, silently."""
    data = Path(path).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise ValueError(f"{path}: sha256 {digest[:12]}… is not the frozen {sha256[:12]}… / 文件已被修改")
    return data


def read_lay_pairs(db, stats: Counter, folder: Path = LAY_DIR, sets: dict[str, str] = LAY_SETS) -> list[Pair]:
    """The everyday questions of ``sets`` (file in ``folder`` → its frozen sha256) as evaluation pairs of
    :data:`LAY_SOURCE`, each with its gold articles the database knows (law resolved to its key, the article
    found in a version); a question none of whose articles it knows gives no row. A missing set raises
    (``OSError``), one whose bytes changed since it was frozen too (:func:`read_frozen`)."""
    pairs = []
    for name, frozen in sets.items():
        for line in read_frozen(Path(folder) / name, frozen).decode("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            stats[f"records:{LAY_SOURCE}"] += 1
            articles: list[tuple[str, int]] = []
            for gold in row.get("gold") or ():
                key = db.resolve(str(gold["law"])).key
                number = int(gold["article"])
                if key is None or db.find_article(key, number) is None:
                    stats[f"unresolved:{LAY_SOURCE}"] += 1
                elif (key, number) not in articles:
                    articles.append((key, number))
            if not articles:
                stats[f"no articles:{LAY_SOURCE}"] += 1
                continue
            pairs.append(
                Pair(str(row["id"]), LAY_SOURCE, str(row["question"])[:MAX_QUESTION], articles, eval=True)
            )
    return pairs


# -- near duplicates and groups ---------------------------------------------------------------------
def normalise_question(text: str) -> str:
    """Letters, digits and CJK characters only, lower case; LawBench's ``场景:`` prefix dropped.

    >>> normalise_question("场景:小张 开了一家店！")
    '小张开了一家店'
    """
    text = re.sub(r"^\s*场景\s*[:：]", "", text)
    return re.sub(r"[^\w]|_", "", text.lower())


def _shingle_matrix(questions: list[str]):
    from scipy.sparse import csr_matrix

    vocab: dict[str, int] = {}
    indptr, indices = [0], []
    for q in questions:
        norm = normalise_question(q)
        grams = {norm[i : i + SHINGLE] for i in range(max(1, len(norm) - SHINGLE + 1))} if norm else set()
        indices.extend(sorted(vocab.setdefault(g, len(vocab)) for g in grams))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.int32)
    return csr_matrix((data, indices, indptr), shape=(len(questions), max(1, len(vocab))))


def similar_pairs(
    questions: list[str], threshold: float, rows: list[int] | None = None
) -> list[tuple[int, int, float]]:
    """``(i, j, jaccard)`` for every ``i`` in ``rows`` (default all) and ``j ≠ i`` whose 3-gram shingle
    Jaccard similarity is at least ``threshold`` (exact, by a sparse product in chunks); sorted.

    >>> similar_pairs(["房东不退押金怎么办", "房东不退押金怎么办？", "公司拖欠工资"], 0.8)
    [(0, 1, 1.0), (1, 0, 1.0)]
    """
    x = _shingle_matrix(questions)
    sizes = np.asarray(x.sum(axis=1)).ravel()
    rows = list(range(len(questions))) if rows is None else rows
    out = []
    for start in range(0, len(rows), 1000):
        chunk = rows[start : start + 1000]
        inter = (x[chunk] @ x.T).tocoo()
        for r, j, n in zip(inter.row, inter.col, inter.data, strict=True):
            i = chunk[r]
            if i == j:
                continue
            jac = n / (sizes[i] + sizes[j] - n)
            if jac >= threshold:
                out.append((int(i), int(j), round(float(jac), 4)))
    return sorted(out)


def deduplicate(pairs: list[Pair], stats: Counter) -> list[Pair]:
    """Merge clusters of near duplicates (module docstring); removed rows are counted per source."""
    parent = list(range(len(pairs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, _ in similar_pairs([p.question for p in pairs], DUPLICATE):
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    clusters: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        clusters.setdefault(find(i), []).append(i)
    kept = []
    for members in clusters.values():
        evals = [i for i in members if pairs[i].eval]
        if evals:  # every evaluation question stays as it is; its training duplicates go
            kept += [pairs[i] for i in evals]
            for i in members:
                if not pairs[i].eval:
                    stats[f"duplicates:{pairs[i].source}"] += 1
                    pairs[evals[0]].merged.append(pairs[i].id)
            continue
        keep = pairs[members[0]]
        for i in members[1:]:
            other = pairs[i]
            stats[f"duplicates:{other.source}"] += 1
            keep.merged.append(other.id)
            keep.articles += [a for a in other.articles if a not in keep.articles]
        kept.append(keep)
    order = {id(p): n for n, p in enumerate(pairs)}
    kept.sort(key=lambda p: order[id(p)])
    return kept


def assign_groups(pairs: list[Pair]) -> None:
    """``group`` for every pair (module docstring): an evaluation question's id for it and the training
    questions most similar to it at Jaccard ≥ :data:`RELATED`, else the row's own id."""
    for p in pairs:
        p.group = p.id
    evals = [i for i, p in enumerate(pairs) if p.eval]
    best: dict[int, tuple[float, int]] = {}
    for i, j, jac in similar_pairs([p.question for p in pairs], RELATED, evals):
        if pairs[j].eval:
            continue
        if j not in best or (-jac, i) < (-best[j][0], best[j][1]):
            best[j] = (jac, i)
    for j, (_jac, i) in best.items():
        pairs[j].group = pairs[i].id


# -- the build --------------------------------------------------------------------------------------
def build_supervision(data_dir: Path, checker: CitationChecker) -> tuple[list[Pair], Counter]:
    stats: Counter = Counter()
    pairs = read_pairs(data_dir, checker, stats) + read_lay_pairs(checker.db, stats)
    for p in pairs:
        stats[f"mined:{p.source}"] += 1
    pairs = deduplicate(pairs, stats)
    assign_groups(pairs)
    ids = Counter(p.id for p in pairs)
    if any(n > 1 for n in ids.values()):
        raise ValueError("duplicate supervision ids: " + ", ".join(i for i, n in ids.items() if n > 1))
    for p in pairs:
        stats[f"questions:{p.source}"] += 1
        stats[f"pairs:{p.source}"] += len(p.articles)
        stats[f"grouped with eval:{p.source}"] += (not p.eval) and p.group != p.id
    return pairs, stats


def lines(pairs: list[Pair]) -> list[str]:
    return [json.dumps(p.as_dict(), ensure_ascii=False, sort_keys=True) for p in pairs]


def build_and_write(data_dir: Path, assets_dir: Path, db) -> dict:
    """Build the pairs and write :data:`FILENAME` and its provenance into ``assets_dir``; a summary."""
    from ..files import write_atomically

    pairs, stats = build_supervision(data_dir, CitationChecker(db))
    path = Path(assets_dir) / FILENAME
    asset = write_gzip_lines(path, lines(pairs))
    sha = hashlib.sha256(asset).hexdigest()
    write_atomically(Path(assets_dir) / PROVENANCE_FILENAME, provenance_markdown(pairs, stats, sha))
    per_source = {
        s: {
            k: stats.get(f"{k}:{s}", 0) for k in ("records", "questions", "pairs", "unresolved", "duplicates")
        }
        for s in (*SOURCES, LAY_SOURCE)
    }
    return asset_summary(
        path,
        asset,
        questions=len(pairs),
        pairs=sum(len(p.articles) for p in pairs),
        eval=sum(p.eval for p in pairs),
        by_source=per_source,
    )


def provenance_markdown(pairs: list[Pair], stats: Counter, sha: str) -> str:
    """The text of :data:`PROVENANCE_FILENAME` (no timestamps: a rebuild gives the same text)."""
    out = [
        "# supervision.jsonl.gz — (question, cited article) pairs",
        "",
        "Questions from the shared data with the statutes their answers cite, canonicalised through the",
        "statute database to `[law key, article number]` of the law in force (`lawluo/retrieval/supervision.py`:",
        "its docstring gives the canonicalisation, deduplication and grouping rules). One JSON object per line:",
        "`id`, `source`, `question` (cut to 500 characters), `articles`, `group`, `eval`; gzip. The everyday",
        "questions of this repository's fresh lay sets 1–4 and lay training sets 1–4 (`lawluo_lay`, evaluation rows,",
        "their labelled articles)",
        "follow: what the query adapter, the fused reranker and the relevance learn from beside LawBench's rows.",
        "",
        *rebuild_section(REBUILD_COMMAND),
        f"- questions: {len(pairs)}, pairs: {sum(len(p.articles) for p in pairs)}, "
        f"evaluation questions: {sum(p.eval for p in pairs)}",
        f"- sha256 of `{FILENAME}`: `{sha}`",
        "",
        "| source | file in ../shared/data | records | questions kept | pairs | unresolved citations | "
        "duplicates removed | grouped with an eval question | articles read from |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    # every source as (its files, upstream, licence, how the articles are read, evaluation?): the shared data's,
    # then the repository's lay sets
    described = {s: (f"`{name}`", *rest) for s, (name, *rest) in SOURCES.items()}
    described[LAY_SOURCE] = (
        f"`benchmarks/data/` {', '.join(f'`{n}`' for n in LAY_SETS)}",
        "this repository (`benchmarks/data/README.md`: who wrote them, the labelling rule, the sha256 each was "
        "frozen with)",
        "the project's own",
        "the labelled `gold` articles",
        True,
    )
    for s, (files, _up, _lic, how, is_eval) in described.items():
        counts = [
            stats.get(f"{k}:{s}", 0) for k in ("records", "questions", "pairs", "unresolved", "duplicates")
        ]
        out.append(
            f"| `{s}`{' (eval)' if is_eval else ''} | {files} | "
            + " | ".join(str(c) for c in counts)
            + f" | {stats.get(f'grouped with eval:{s}', 0)} | {how} |"
        )
    out += [
        "",
        "Records without a resolvable citation give no row. Unresolved citations: a law or article the",
        "database does not know, or a repealed law cited without content that agrees with a successor article.",
        "Duplicates are counted on the source of the row removed.",
        "",
        "## Licences and terms",
        "",
        "| source | upstream (commit) | licence / terms |",
        "|---|---|---|",
    ]
    for s, (_files, upstream, licence, _how, _e) in described.items():
        out.append(f"| `{s}` | {upstream} | {licence} |")
    out += [
        "",
        "Statutes themselves are not protected by copyright (PRC Copyright Law art. 5). Only the dev halves",
        "of LawBench are read; the test halves are never used. The lawyer-llama and KINLED data are for",
        "academic research only (their authors' terms).",
        "",
    ]
    return "\n".join(out)
