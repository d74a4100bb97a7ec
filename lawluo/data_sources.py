"""The public sources ``assets/`` is built from, and the folder layout ``python -m lawluo build all --data DIR``
reads: one home for both, read by the build (:mod:`lawluo.build`), the fetch script
(``scripts/fetch_data.py``) and ``data/SOURCES.md``, which says the same in prose.

    DIR/laws/                 LawRefBook/Laws: 14 category folders, db.sqlite3, 法律法规模版.md
    DIR/lawbench/*.jsonl      open-compass/LawBench (the .dev files: the half we may use)
    DIR/lawyer_llama/*.jsonl  AndrewZhe/lawyer-llama
    DIR/disc/*.jsonl          FudanDISC/DISC-LawLLM
    DIR/lawluo_kinled/*.json  NEFUJing/LawLuo (the KINLED data, from the repository's history)

and the older statute versions this repository keeps in ``data/laws_supplement/`` (:data:`SUPPLEMENT`).

Standard library only: the fetch script imports it before anything is installed. Each file's
``sha256`` is that of the file the committed assets were built from, so a fetched folder can be checked
byte for byte (a folder's: :func:`tree_sha256`).
"""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass
from pathlib import Path

_LB, _LL, _DISC, _KINLED = (
    "open-compass/LawBench",
    "AndrewZhe/lawyer-llama",
    "FudanDISC/DISC-LawLLM",
    "NEFUJing/LawLuo",
)


@dataclass(frozen=True)
class Item:
    """One file (or folder, ``target`` ending in ``/``) of the layout and how it is made from upstream.

    ``how``: ``copy`` (the bytes as they are), ``tree`` (the folder's ``keep`` entries, bytes as they are),
    ``jsonl`` (a JSON list → one ``json.dumps(row, ensure_ascii=False)`` per line), ``lawbench`` (a
    LawBench task file → ``{"id": <prefix><index>, <fields>}`` per line, only the indices of
    ``scripts/dev_split.json`` for a ``.dev`` file), ``predictions`` (LawBench's predictions of
    ``systems`` for the dev questions), ``zixun`` (``jsonl`` with ``"id": "zx-<index>"`` first, dev indices).
    """

    target: str
    upstream: tuple[str, ...]  # path(s) in the repository at the commit; the first that exists is used
    how: str
    sha256: str
    records: int
    what: str
    fields: tuple[tuple[str, str], ...] = ()  # lawbench: (our field, upstream field)
    prefix: str = ""  # lawbench: the id prefix, e.g. lb38-
    keep: tuple[str, ...] = ()  # tree: the entries kept
    systems: tuple[str, ...] = ()  # predictions: the systems, in the order of the file


@dataclass(frozen=True)
class Source:
    name: str  # the folder under DIR
    repo: str  # owner/name on GitHub
    commit: str
    licence: str
    items: tuple[Item, ...]

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}.git"


LAWS_KEEP = (
    "db.sqlite3",
    "法律法规模版.md",
    *"其他 刑法 司法解释 宪法 宪法相关法 案例 民法典 民法商法 社会法 经济法 行政法 行政法规 诉讼与非诉讼程序法 部门规章".split(),
)
#: LawBench's systems whose consultation answers (task 3-8) are kept, in the file's order.
SYSTEMS = (
    "GPT4",
    "GPT-3.5-turbo-0613",
    "chatlaw-13b-hf",
    "chatlaw-33b-hf",
    "fuzi-mingcha-7b-hf",
    "hanfei-1.0-7b-hf",
    "lawgpt-7b-beta1.1-hf",
    "lawyer-llama-13b-hf",
    "lexilaw-6b-hf",
    "wisdom-interrogatory-7b-hf",
    "qwen-7b-chat-hf",
    "internlm-chat-7b-hf",
    "chatglm2-6b-hf",
    "baichuan-13b-chat-hf",
)
_QA = (("question", "question"), ("reference", "answer"))
_FACTS = (("input", "question"), ("output", "answer"))

SOURCES: tuple[Source, ...] = (
    Source(
        "laws",
        "LawRefBook/Laws",
        "2f4c5c23716267af9dbebbbbd6cbbf732b101981",
        "statutes and official documents: not protected by copyright (PRC Copyright Law art. 5)",
        (
            Item(
                "laws/",
                ("",),
                "tree",
                "59c869520a8dcc16ce6edf04215b36f6a746d5ff37150363d9df9a36f56fabe7",
                1586,
                "PRC laws, regulations, judicial interpretations, rules and typical cases, one Markdown file each",
                keep=LAWS_KEEP,
            ),
        ),
    ),
    Source(
        "lawbench",
        _LB,
        "e30981bb3ff54c41571f222e0b23e92d27375388",
        "Apache-2.0 repository; upstream data terms apply (CAIL2018 facts: CAIL research terms)",
        (
            Item(
                "lawbench/domain_questions.dev.jsonl",
                ("data/zero_shot/2-4.json",),
                "lawbench",
                "071f531787d5059adf3747d79d2880ea762b1464ec5b7e527b44ecb448461f98",
                250,
                "consultation questions labelled with one of 20 domains (dev half)",
                (("question", "question"), ("label", "answer")),
                "lb24-",
            ),
            Item(
                "lawbench/consult.dev.jsonl",
                ("data/zero_shot/3-8.json",),
                "lawbench",
                "653f9903da4983b3c90bc21f01628bc3b27ea74a942a42fce4e8af5641921966",
                250,
                "consultation questions with a lawyer's reference answer (dev half)",
                _QA,
                "lb38-",
            ),
            Item(
                "lawbench/consult_predictions.dev.jsonl",
                tuple(f"predictions/zero_shot/{s}/3-8.json" for s in SYSTEMS),
                "predictions",
                "803c4ee54cd4a8cb6b436f04be4d657f7a03b8f02b8e9aedc939d8fad87e27d0",
                3500,
                "answers of 14 systems to the dev consultation questions",
                prefix="lb38-",
                systems=SYSTEMS,
            ),
            Item(
                "lawbench/scenario_statute.dev.jsonl",
                ("data/zero_shot/3-2.json",),
                "lawbench",
                "bc899edd3128ad5e0d8a3f567a4af8ee088c833d561f1a0f4519ab4e69b53872",
                250,
                "scenario → the statute that governs it (dev half)",
                _QA,
                "lb32-",
            ),
            Item(
                "lawbench/criminal_facts_articles.jsonl",
                ("data/zero_shot/3-1.json",),
                "lawbench",
                "44f5bbcaf2fca3f4223630fbc8d7afdd1d25305a2ab3d6869b93057a505d47b1",
                500,
                "CAIL2018 criminal facts with charge and article",
                _FACTS,
                "lb31-",
            ),
            Item(
                "lawbench/criminal_facts_terms.jsonl",
                ("data/zero_shot/3-4.json",),
                "lawbench",
                "7ce26226aa0f413ab61a0ed1a09faf80bb82ff4608968497918cfee86604b5c7",
                500,
                "CAIL2018 criminal facts with charge and prison term",
                _FACTS,
                "lb34-",
            ),
        ),
    ),
    Source(
        "lawyer_llama",
        _LL,
        "abaa095",
        "Apache-2.0; the README restricts the data to academic research",
        (
            Item(
                "lawyer_llama/zixun_gpt4.dev.jsonl",
                ("data/zixun_gpt4.json",),
                "zixun",
                "60467030d92c305c63bcd5f473045ad659dc4ba5cd88130647b5c2132e286db5",
                500,
                "consultation, three 民法典 articles, GPT-4's answer (dev half)",
                prefix="zx-",
            ),
            Item(
                "lawyer_llama/legal_counsel_multi_turn_with_article_v2.jsonl",
                ("data/legal_counsel_multi_turn_with_article_v2.json",),
                "jsonl",
                "cd42445146aaadd0dddccbeaaa8d3ec74cf5902473e3c82a7ff2c6929e50c5c9",
                476,
                "multi-turn client/lawyer dialogues with the articles used",
            ),
            Item(
                "lawyer_llama/legal_counsel_with_article_v2.jsonl",
                ("data/legal_counsel_with_article_v2.json",),
                "jsonl",
                "97739e89fdd906a44c7f43143b041c73843b75d4a3cba68d82530aa96df0f55e",
                1000,
                "single-turn consultations with articles",
            ),
            Item(
                "lawyer_llama/legal_advice.jsonl",
                ("data/legal_advice.json",),
                "jsonl",
                "db6e90e5adb43c9690904381f26efc7768f45a6118cd2ed6c44fafcc9ff52b1b",
                5000,
                "real user questions with short answers",
            ),
        ),
    ),
    Source(
        "disc",
        _DISC,
        "f40d023",
        "Apache-2.0",
        (
            Item(
                "disc/qa_short_answer.jsonl",
                ("eval/datasets/subjective/qa_short_answer.json",),
                "jsonl",
                "90bab09d01eb286c4408a7f85a48b386f4b25b495b648d4409bb719a027bea05",
                300,
                "case analyses and short consultation Q&A with reference outputs",
            ),
        ),
    ),
    Source(
        "lawluo_kinled",
        _KINLED,
        "562fbe30d85b3b3e044c6e3c61eb92b8f5a482bf",
        "no licence file; the authors state academic use only",
        (
            Item(
                "lawluo_kinled/consult_995.json",
                ("Datasets/法律咨询与回复数据_995.json", "Datasets /法律咨询与回复数据_995.json"),
                "copy",
                "fe153d6398c4ac780676d0ccd12ca2702e09c244aea8ea83f9850a7d49b5deb0",
                995,
                "KINLED single-turn consultations",
            ),
            Item(
                "lawluo_kinled/exam_985.json",
                ("Datasets/法考问答_985.json", "Datasets /法考问答_985.json"),
                "copy",
                "a2b18dcddd5371d33a50663819aff1b3e11d4fa4a34009e6aa3d6e92250596e7",
                985,
                "KINLED judicial-exam dialogues",
            ),
            Item(
                "lawluo_kinled/judicial_interp_4382.json",
                ("Datasets/司法解释情景对话_4382.json", "Datasets /司法解释情景对话_4382.json"),
                "copy",
                "41bd0859defa9fa724aa6e2d6cfeac23713085b923a39df98bc33addc7f7d520",
                4382,
                "KINLED judicial-interpretation dialogues",
            ),
            Item(
                "lawluo_kinled/term_qa_3125.json",
                (
                    "Datasets /法律术语问答 /整理合并版本.json",
                    "Datasets /法律术语问答/整理合并版本.json",
                    "Datasets/法律术语问答/整理合并版本.json",
                ),
                "copy",
                "432fc0281d84aa5945032960d1d58f00a0f9f00aa3c498978b87bd236ef97958",
                3125,
                "KINLED legal-term dialogues",
            ),
        ),
    ),
)


@dataclass(frozen=True)
class SupplementFile:
    """One file of ``data/laws_supplement/`` (in this repository): the bytes of ``upstream`` at ``commit``."""

    target: str  # path under data/laws_supplement/
    commit: str  # LawRefBook/Laws commit whose tree holds the file
    upstream: str  # its path there
    sha256: str
    what: str


#: Older versions of laws and interpretations that LawRefBook/Laws held in its history but no longer holds
#: at the pinned commit (each was replaced by a later version there), copied byte for byte. ``build statutes``
#: adds them after the pinned tree when ``laws/`` is that tree (:data:`SUPPLEMENT_APPLIES_TO`), so that a
#: citation can be judged against the version in force on a date. The file name's date is the adoption date
#: the file's header gives for that version.
SUPPLEMENT_DIR = Path(__file__).resolve().parents[1] / "data" / "laws_supplement"
SUPPLEMENT_REPO = "LawRefBook/Laws"
#: ``lawluo.law.build.source_fingerprint`` of ``laws/`` at 2f4c5c2, the tree the supplement completes.
SUPPLEMENT_APPLIES_TO = "db88e1d8a0f63d5cef89d524988772310e59f16f9ddec0446b68acb09b4fa4cc"
_C_0320, _C_0420 = "3305c96becda40d0253cc6b9facb33573bddcc56", "3cd6e86b80f0fac5478dc34216c80e8c0a82b9f0"
SUPPLEMENT: tuple[SupplementFile, ...] = (
    SupplementFile(
        "刑法/刑法(2020-12-26).md",
        _C_0420,
        "刑法/刑法.md",
        "0f94a21c2e86ede0a589250b4a2b92cc0f94bc20e91e634c1dbbe7a79dac48d2",
        "刑法 as amended by 修正案（十一）, in force 2021-03-01 to 2024-02-29 (the pinned 刑法.md adds 修正案（十二）)",
    ),
    SupplementFile(
        "社会法/劳动合同法(2007-06-29).md",
        _C_0320,
        "社会法/劳动合同法.md",
        "59433443c035aa15c876f5d74e1856d042ffaf9ae52cda8219494da5365832e1",
        "劳动合同法 as adopted in 2007, in force 2008-01-01 to 2013-06-30 (the pinned tree: the 2012 amendment)",
    ),
    SupplementFile(
        "司法解释/最高人民法院关于适用《中华人民共和国民事诉讼法》的解释(2014-12-18).md",
        _C_0320,
        "司法解释/最高人民法院关于适用《中华人民共和国民事诉讼法》的解释.md",
        "9668b14834c2f0157a56efa0ba7cc4395c482e81898f5a2ae910b61fb7cb69bc",
        "民诉法解释 (法释〔2015〕5号), in force 2015-02-04 to 2020-12-31 (the pinned tree: 2020 and 2022)",
    ),
    SupplementFile(
        "司法解释/最高人民法院关于审理民间借贷案件适用法律若干问题的规定(2020-08-18).md",
        _C_0420,
        "司法解释/最高人民法院关于审理民间借贷案件适用法律若干问题的规定.md",
        "d7283a69d0f509475eadf940279f287cdccc8f4aaec4ece183434170a3179298",
        "民间借贷规定 as amended in August 2020, in force 2020-08-20 to 2020-12-31 (the pinned tree: 2020-12-29)",
    ),
    SupplementFile(
        "司法解释/最高人民法院关于审理医疗损害责任纠纷案件适用法律若干问题的解释(2017-03-27).md",
        _C_0420,
        "司法解释/最高人民法院关于审理医疗损害责任纠纷案件适用法律若干问题的解释.md",
        "6b60fb8bfcd091e3a5a04b5254a181d52aee3c22a3395591d91558627a3395a8",
        "医疗损害责任解释 of 2017, in force 2017-12-14 to 2020-12-31 (the pinned tree: 2020-12-29)",
    ),
)


def fetch_command(dest: str | Path, only: list[str] | tuple[str, ...] = ()) -> str:
    """The command that fetches the sources ``only`` (default all) into ``dest``.

    >>> fetch_command("my data", ["laws", "disc"])
    "python scripts/fetch_data.py --dest 'my data' --only laws --only disc"
    """
    return f"python scripts/fetch_data.py --dest {shlex.quote(str(dest))}" + "".join(
        f" --only {n}" for n in only
    )


def source(name: str) -> Source:
    """The source named ``name``; ``KeyError`` lists the names."""
    for s in SOURCES:
        if s.name == name:
            return s
    raise KeyError(f"unknown source {name!r}: one of {', '.join(s.name for s in SOURCES)}")


def source_of(target: str) -> Source:
    """The source whose layout holds ``target`` (a path under the data folder)."""
    return source(target.split("/", 1)[0])


def file_sha256(path: str | Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks (sources, assets, the files an index records)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_sha256(folder: str | Path) -> str:
    """sha256 over every file under ``folder``: its POSIX path, NUL, its sha256, newline, in path order.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "a.md").write_text("x")
    >>> tree_sha256(d)[:12]
    'd60bef8bf3a8'
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(
            path.relative_to(folder).as_posix().encode() + b"\0" + file_sha256(path).encode() + b"\n"
        )
    return digest.hexdigest()


def missing(data_dir: str | Path, targets: tuple[str, ...]) -> list[str]:
    """The ``targets`` (paths of the layout; a folder ends with ``/``) that ``data_dir`` lacks."""
    data_dir = Path(data_dir)
    return [
        t for t in targets if not ((data_dir / t).is_dir() if t.endswith("/") else (data_dir / t).is_file())
    ]
