"""How often lay clients use each keyword of the statute elements: ``lawluo/tolc/keyword_df.tsv``.

    python benchmarks/keyword_specificity.py        # rewrites lawluo/tolc/keyword_df.tsv (≈ 5 s)

A keyword of ``lawluo/tolc/statute_elements.yaml`` names its entry's issue (押金, 漏水, 加班费) or only a
setting any matter has (公司, 房子, 三年, 补偿). Which of the two it is shows in how many real lay questions
use it: the questions of ``../shared/data`` (lawyer_llama's ``legal_advice.jsonl``, 5,000 questions scraped
from consultation sites; LawBench's ``domain_questions.dev.jsonl`` and ``consult.dev.jsonl``; lawyer_llama's
``zixun_gpt4.dev.jsonl``) — none of them a benchmark question of this project. The file holds, for every
keyword, the number of those questions that contain it (``df``), and on its first line the number of
questions (``N``). :meth:`lawluo.tolc.material.ClarificationMaterial.lead` reads it: a question names an entry
*specifically* when it says one of the entry's keywords that few lay questions say (issue 42 item 3).
"""

from __future__ import annotations

import json

import yaml
from _common import ROOT

SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "lawluo" / "tolc" / "keyword_df.tsv"


def questions() -> list[str]:
    out: list[str] = []
    for line in (SHARED / "lawyer_llama" / "legal_advice.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rows = json.loads(line)
            for row in rows if isinstance(rows, list) else [rows]:
                out.append(f"{row.get('instruction', '')} {row.get('input', '')}")
    for name, field in (
        ("lawbench/domain_questions.dev.jsonl", "question"),
        ("lawbench/consult.dev.jsonl", "question"),
        ("lawyer_llama/zixun_gpt4.dev.jsonl", "query"),
    ):
        path = SHARED / name
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    text = row.get(field) or ""
                    out.append(text if isinstance(text, str) else json.dumps(text, ensure_ascii=False))
    return [q for q in out if q.strip()]


def main() -> None:
    entries = yaml.safe_load((ROOT / "lawluo" / "tolc" / "statute_elements.yaml").read_text(encoding="utf-8"))
    keywords = sorted({k for rows in entries.values() for e in rows for k in e.get("keywords", [])})
    texts = questions()
    lines = [f"N\t{len(texts)}"] + [f"{k}\t{sum(k in t for t in texts)}" for k in keywords]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(keywords)} keywords, {len(texts)} lay questions → {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
