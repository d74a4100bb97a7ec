"""A held-out set's first level without a model, as a visitor sees it since issue 42 item 3: the elements asked
and, beside them, those the question already answers (shown pre-marked as 您已说明：…), scored against hand labels.

    python benchmarks/clarification_first_level.py --out /tmp/after.jsonl            # run (held-out 17), ≈ 5 s
    python benchmarks/clarification_first_level.py --score benchmarks/data/clarification_elements.heldout17.after.jsonl

Each question goes through the firm as a visitor's does (the receptionist routes it, soft routing may draw the
material from another domain, no model), K=3, first level only. ``--out`` writes one object per first-level
element: ``id``, ``domain`` (the consultation's domain, as the receptionist routed it), ``element``, ``mark`` (``unknown`` for an element asked;
``yes``/``no`` for one the builder pre-marked from the question), ``drawn`` (the domain whose material the tree drew on),
``lead`` (the statute entry the question names that opened the first level, :meth:`~lawluo.tolc.material.ClarificationMaterial.lead`; ``""`` for none) and, for a
pre-marked one, ``quote`` (the client's words shown after 您已说明). Printed (``--score``, or after a run):

- the asked elements relevant / labelled by the strict rule of ``benchmarks/data/README.md``
  (``--labels``, ``clarification_labels.heldout17.jsonl``), with the unlabelled count (the figure counts only
  when that is 0) — the figure comparable with the "before" run of ``benchmarks/clarifier_local.py``;
- the pre-marked elements whose mark is correct / labelled (``--premarks``, one object per element: ``id``,
  ``element``, ``mark``, ``correct`` 0/1: the question does say that answer to that element).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _common import ROOT  # also puts the repository root on sys.path

from lawluo.config import load_settings
from lawluo.firm import Firm
from lawluo.tolc.material import stated_answer

DATA = ROOT / "benchmarks" / "data"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run(questions: list[dict], firm: Firm | None = None) -> list[dict]:
    """Every first-level element ``firm`` (by default the shipped one, no model configured) shows for ``questions``."""
    firm = firm or Firm.from_settings(load_settings(environ={}))
    rows = []
    for q in questions:
        state = firm.new()
        firm.receive(state, q["question"])
        *_, tree = firm.clarify(state, height=2)
        lead = firm.material.lead(q["question"], tree.drawn_from or state.domain) if firm.material else None
        for node in tree.level(1):
            row = {"id": q["id"], "domain": state.domain, "element": node.statement, "mark": node.mark}
            row["lead"] = lead.id if lead is not None and not tree.issue else ""
            row["drawn"] = tree.drawn_from or state.domain  # the domain whose material the tree drew on
            if node.mark != "unknown":
                said = stated_answer(node.statement, q["question"], firm.material.colloquial)
                row["quote"] = said[1] if said else ""
            rows.append(row)
    return rows


def report(rows: list[dict], labels: dict, premarks: dict) -> None:
    asked = [r for r in rows if r["mark"] == "unknown"]
    marked = [r for r in rows if r["mark"] != "unknown"]
    rel = sum(labels.get((r["id"], r["element"]), 0) for r in asked)
    lab = sum((r["id"], r["element"]) in labels for r in asked)
    print(
        f"asked first-level elements relevant (strict rule): {rel}/{lab}"
        + (f" = {rel / lab:.1%}" if lab else "")
        + f"; unlabelled {len(asked) - lab}; {len(asked)} asked over {len({r['id'] for r in rows})} questions"
    )
    if asked and all("lead" in r for r in asked):  # runs since session 40 record what led the first level
        unled = [r for r in asked if not r["lead"] and r["drawn"] != "other"]
        rel_u = sum(labels.get((r["id"], r["element"]), 0) for r in unled)
        lab_u = sum((r["id"], r["element"]) in labels for r in unled)
        print(
            f"questions whose first level no entry they name led (domain not 其他): {len({r['id'] for r in unled})}; "
            f"their asked elements relevant {rel_u}/{lab_u}" + (f" = {rel_u / lab_u:.1%}" if lab_u else "")
        )
    ok = sum(premarks.get((r["id"], r["element"], r["mark"]), 0) for r in marked)
    judged = sum((r["id"], r["element"], r["mark"]) in premarks for r in marked)
    print(
        f"pre-marked (您已说明) elements: {len(marked)} on {len({r['id'] for r in marked})} questions; "
        f"mark correct {ok}/{judged}"
        + (f" = {ok / judged:.1%}" if judged else "")
        + f"; unjudged {len(marked) - judged}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--questions", type=Path, nargs="+", default=[DATA / "clarification_questions.heldout17.jsonl"]
    )
    parser.add_argument(
        "--labels", type=Path, nargs="+", default=[DATA / "clarification_labels.heldout17.jsonl"]
    )
    parser.add_argument(
        "--premarks", type=Path, nargs="+", default=[DATA / "clarification_premarks.heldout17.jsonl"]
    )
    parser.add_argument("--out", type=Path, help="write every first-level element here (a run)")
    parser.add_argument("--score", type=Path, help="score the elements an earlier --out wrote (no run)")
    args = parser.parse_args()
    labels = {
        (r["id"], r["element"]): int(r["relevant"]) for p in args.labels if p.is_file() for r in read_jsonl(p)
    }
    premarks = {
        (r["id"], r["element"], r["mark"]): int(r["correct"])
        for p in args.premarks
        if p.is_file()
        for r in read_jsonl(p)
    }
    if args.score:
        rows = read_jsonl(args.score)
    else:
        rows = run([q for path in args.questions for q in read_jsonl(path)])
        if args.out:
            args.out.write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
            )
    report(rows, labels, premarks)


if __name__ == "__main__":
    main()
