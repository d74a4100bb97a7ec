"""Controls for the citation checker's published precision (issue 40, item 4), built from public data.

Two controls, neither used to set the checker's thresholds (those were set on LawBench consultation
answers and ``tests/fixtures/checked_citations.jsonl``):

- **negative** — real, correct citations in realistic prose, which the checker must not call
  hallucinated. *judgment* style: real criminal judgments (JuDGE, ``oneal2000/JuDGE`` ``data/test.json``:
  full judgments from China Judgments Online) as the court wrote them, with the articles the court cited
  and, where the judgment appends them, the article texts it quoted. *answer* style: the 民法典 articles
  lawyer-llama's consultations were given (``legal_counsel_with_article_v2.jsonl``, field ``laws``:
  ``《民法典》第一千零七十六条：<text>``), cited in the forms answers use, inside the real answer's own
  sentences that cite nothing.
- **positive** — corrupted citations made from the same public articles: the wrong number, the wrong
  law, one word of legal meaning changed (应当↔可以, 以上↔以下, 醉酒↔饮酒, 不得 removed, a number or
  period or amount changed), a splice of one clause's subject with another clause's penalty, a repealed
  law, an older version of a law cited without a date, an article number the law does not have.

A citation counts as real and correct only when its law and article exist in the statute database (in
the version in force on the date the text was written where the database holds it) and any text quoted
for it is the article's text or contiguous parts of it: decided by string containment after light
normalisation (:func:`plain`), never by running the checker. Everything is seeded (:data:`SEED`), so a
rebuild writes the same bytes; the files are frozen by ``SHA256SUMS`` beside them.

    python -m lawluo bench checker --build-controls --judge-data JuDGE/data/test.json \
        [--data ../shared/data] [--controls benchmarks/data/checker_controls]

(JuDGE at commit :data:`JUDGE_COMMIT`; ``git clone https://github.com/oneal2000/JuDGE``.)

A held-out set (:class:`HeldOut`, ``--held-out-from``) is built by the same rules from what an earlier set
did not use: judgments not in it (by JuDGE ``text_id`` and by text), lawyer-llama consultations it did not
draw (the single-turn file's other lines and the multi-turn dialogues, :data:`MULTI_TURN_FILE`), another
seed, and corruptions preferably made from articles its positive rows did not use.

The package, by kind of control: :mod:`.common` (sources, sizes, the rule of a real citation, a row's
shape), :mod:`.judgments` (judgment style), :mod:`.answers` (answer style), :mod:`.corruptions` and
:mod:`.positive` (the positive control), :mod:`.sets` (a whole set, a held-out set), :mod:`.frozen`
(``SHA256SUMS``); the later held-out sets :mod:`.disc` (DISC-LawLLM judgments) and :mod:`.other_laws`
(v3, laws other than 刑法 and 民法典).
"""

from __future__ import annotations

from .answers import Source, _add, _cite, _part, _plain_sentences, negative_answer, paragraphs, sentences
from .common import (
    ANSWER_ROWS,
    CAIL_ARTICLES_FILE,
    DRINK_LAWS,
    FILES,
    JUDGE_COMMIT,
    JUDGE_PATH,
    JUDGE_REPO,
    LAWYER_LLAMA_FILE,
    MIN_QUOTE,
    MULTI_TURN_FILE,
    OTHER_LAWS,
    POSITIVE_SIZES,
    POSITIVE_VERDICT,
    PRC,
    REPEALED_SIZES,
    SEED,
    SUMS,
    ZIXUN_FILE,
    contained,
    negative_row,
    plain,
    read_jsonl_rows,
    version_at,
    written_on,
)
from .corruptions import SWAPS, Corrupter, Corruption, change_number, replace_at, splice_clauses
from .frozen import FrozenError, dumps, read_sums, sha256, write
from .judgments import Mention, judgment_mentions, judgment_row, judgment_rows, negative_judgment
from .positive import article_id, positive_rows
from .sets import HeldOut, _used_by, article_pools, build, build_held_out

__all__ = [
    "ANSWER_ROWS",
    "CAIL_ARTICLES_FILE",
    "DRINK_LAWS",
    "FILES",
    "JUDGE_COMMIT",
    "JUDGE_PATH",
    "JUDGE_REPO",
    "LAWYER_LLAMA_FILE",
    "MIN_QUOTE",
    "MULTI_TURN_FILE",
    "OTHER_LAWS",
    "POSITIVE_SIZES",
    "POSITIVE_VERDICT",
    "PRC",
    "REPEALED_SIZES",
    "SEED",
    "SUMS",
    "SWAPS",
    "ZIXUN_FILE",
    "Corrupter",
    "Corruption",
    "FrozenError",
    "HeldOut",
    "Mention",
    "Source",
    "_add",
    "_cite",
    "_part",
    "_plain_sentences",
    "_used_by",
    "article_id",
    "article_pools",
    "build",
    "build_held_out",
    "change_number",
    "contained",
    "dumps",
    "judgment_mentions",
    "judgment_row",
    "judgment_rows",
    "negative_answer",
    "negative_judgment",
    "negative_row",
    "paragraphs",
    "plain",
    "positive_rows",
    "read_jsonl_rows",
    "read_sums",
    "replace_at",
    "sentences",
    "sha256",
    "splice_clauses",
    "version_at",
    "write",
    "written_on",
]
