"""``bench checker``: the scoring, the bootstrap, the corruption builders, the frozen controls, the CLI errors."""

from __future__ import annotations

import doctest
import hashlib
import json
import random
from pathlib import Path

import numpy as np
import pytest

from lawluo.cli import main
from lawluo.law import checker_bench as bench
from lawluo.law import controls
from tests.conftest import SHARED_DATA

pytestmark = pytest.mark.slow  # 9 s of the suite on 2 cores (4 s or more: left out of the inner loop)

CONTROLS = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "checker_controls"


def _row(id_, control, citations, group="answer"):
    row = {
        "id": id_,
        "control": control,
        "style": "answer",
        "text": "…",
        "as_of": None,
        "citations": citations,
    }
    if control == "positive":
        row["kind"] = group
    return row


def _cit(article, verdict, expect="not_hallucinated", key="民法典"):
    return {"key": key, "article": article, "suffix": 0, "expect": expect, "verdict": verdict}


def _found(article, verdict, key="民法典"):
    return {
        "key": key,
        "article": article,
        "suffix": 0,
        "verdict": verdict,
        "span": [0, 1],
        "quoted": None,
        "note": "",
    }


def _scored():
    """Three negative rows (4 real citations, one called wrong_number, one missed) and three positive rows."""
    rows_found = [
        (
            _row("n1", "negative", [_cit(1, "verified"), _cit(2, "no_content")]),
            [_found(1, "verified"), _found(2, "wrong_number"), _found(9, "not_found")],
        ),
        (_row("n2", "negative", [_cit(3, "no_content")]), [_found(3, "no_content")]),
        (_row("n3", "negative", [_cit(4, "verified")]), []),
        (
            _row("p1", "positive", [_cit(5, "content_mismatch", "hallucinated")], "should_may"),
            [_found(5, "verified")],
        ),
        (
            _row("p2", "positive", [_cit(6, "content_mismatch", "hallucinated")], "should_may"),
            [_found(6, "content_mismatch")],
        ),
        (
            _row("p3", "positive", [_cit(7, "wrong_number", "hallucinated")], "wrong_number"),
            [_found(7, "wrong_number")],
        ),
    ]
    scored, unexpected, excluded = [], [], []
    for row, found in rows_found:
        s, u, x = bench.score_row(row, found)
        scored += s
        unexpected += u
        excluded += x
    return scored, unexpected, excluded


def test_doctests_run_and_pass():
    from lawluo.law import checker_bench_scoring, checker_bench_stats
    from lawluo.law.controls import answers, common, corruptions, judgments

    # bench's and the controls' examples live in the modules that define them
    for modules in ((checker_bench_scoring, checker_bench_stats), (common, judgments, answers, corruptions)):
        results = [doctest.testmod(module) for module in modules]
        assert sum(r.attempted for r in results) > 0 and not any(r.failed for r in results), modules


def test_given_verdict_prefers_a_hallucinated_then_a_content_bearing_verdict():
    assert bench.given_verdict([{"verdict": "no_content"}, {"verdict": "verified"}]) == "verified"
    assert (
        bench.given_verdict([{"verdict": "verified"}, {"verdict": "content_mismatch"}]) == "content_mismatch"
    )
    assert bench.given_verdict([{"verdict": "no_content"}]) == "no_content"
    assert bench.given_verdict([]) is None


def test_scoring_on_a_hand_made_set():
    scored, unexpected, excluded = _scored()
    summary = bench.summarise(scored, unexpected, excluded, resamples=200, seed=0)
    fa = summary["false_alarms"]["overall"]
    assert (fa["n"], fa["k"], fa["rate"]) == (
        4,
        1,
        0.25,
    )  # art. 2 called wrong_number; the missed art. 4 is no alarm
    assert summary["false_alarms"]["answer, name and number only"]["rate"] == 0.5
    assert summary["missed"]["negative/answer"] == {"missed": 1, "of": 4}
    recall = summary["recall"]
    assert (recall["overall"]["k"], recall["overall"]["n"]) == (2, 3)
    assert recall["should_may"]["rate"] == 0.5 and recall["should_may"]["exact"] == 1
    assert recall["wrong_number"]["rate"] == 1.0
    per = summary["per_verdict"]
    # wrong_number: given twice (art. 2 wrongly, art. 7 rightly), expected once
    assert (
        per["wrong_number"]["given"],
        per["wrong_number"]["expected"],
        per["wrong_number"]["correct"],
    ) == (2, 1, 1)
    assert per["wrong_number"]["precision"]["rate"] == 0.5 and per["wrong_number"]["recall"]["rate"] == 1.0
    # verified: expected for art. 1 and art. 4 (missed), given for art. 1 and the corrupted art. 5
    assert per["verified"]["precision"]["rate"] == 0.5 and per["verified"]["recall"]["rate"] == 0.5
    assert summary["unexpected"] == {"citations": 1, "hallucinated": 1, "by_group": {"negative/answer": 1}}
    assert summary["confusion"]["no_content"] == {"wrong_number": 1, "no_content": 1}


def test_excluded_citations_are_not_scored_nor_unexpected():
    row = _row("n", "negative", [_cit(1, "no_content", key="刑法")])
    row["excluded"] = [
        {
            "law": "最高人民法院关于适用财产刑若干问题的规定",
            "article": 2,
            "suffix": 0,
            "reason": "law not in the statute database",
        }
    ]
    found = [
        _found(1, "no_content", key="刑法"),
        _found(2, "not_found", key="最高人民法院关于适用财产刑若干问题的规定"),
    ]
    scored, unexpected, excluded = bench.score_row(row, found)
    assert [s.given for s in scored] == ["no_content"] and unexpected == [] and excluded == ["not_found"]


def test_bootstrap_interval():
    # every row has the same rate: every resample does too
    assert bench.bootstrap_ratio(np.array([1, 2, 3]), np.array([2, 4, 6]), 500, 0) == (0.5, 0.5, 0.5)
    r, lo, hi = bench.bootstrap_ratio(np.array([1] * 5 + [0] * 95), np.ones(100), 2000, 0)
    assert r == 0.05 and 0.0 <= lo < 0.05 < hi <= 0.12
    # seeded: the same interval twice
    assert bench.bootstrap_ratio(np.array([1, 0, 0, 1]), np.ones(4), 300, 7) == bench.bootstrap_ratio(
        np.array([1, 0, 0, 1]), np.ones(4), 300, 7
    )
    assert np.isnan(bench.bootstrap_ratio(np.zeros(3), np.zeros(3))[0])


def test_check_text_passes_the_date_only_to_a_check_that_takes_it():
    class Dated:
        def check(self, text, as_of=None):
            return ("dated", as_of)

    class Undated:
        def check(self, text):
            return ("undated",)

    assert bench.check_text(Dated(), "t", "2018-05-24") == ("dated", "2018-05-24")
    assert bench.check_text(Undated(), "t", "2018-05-24") == ("undated",)


# -- the controls' builders, on real articles ----------------------------------------------------


def test_one_word_swap_changes_that_word_and_nothing_else(db):
    art = db.article(db.current("刑法"), 45, 0)  # 有期徒刑的期限……为六个月以上十五年以下。
    at = art.text.index("以上")
    changed = controls.replace_at(art.text, at, "以上", "以下")
    assert changed != art.text and len(changed) == len(art.text)
    assert changed[:at] == art.text[:at] and changed[at + 2 :] == art.text[at + 2 :]
    assert not controls.contained(changed, art.text)
    with pytest.raises(ValueError):
        controls.replace_at(art.text, at + 1, "以上", "以下")


def test_word_swaps_and_number_changes_on_real_articles(db):
    corrupter = controls.Corrupter(db, random.Random(0))
    pool = [db.article(db.current("刑法"), 264, 0), db.article(db.current("民法典"), 1069, 0)]
    swaps = corrupter.word_swaps("above_below", pool)
    assert swaps
    for c in swaps:
        before = c.detail["quote_before"]
        assert controls.contained(before, c.source.text) and not controls.contained(c.quote, c.source.text)
        diff = [i for i, (a, b) in enumerate(zip(before, c.quote, strict=True)) if a != b]
        assert len(diff) == 1 and before[diff[0] - 1 : diff[0] + 1] in ("以上", "以下")
    removed = corrupter.word_swaps("must_not_removed", pool)
    assert [c.quote for c in removed if "不得" not in c.quote] and all(
        c.detail["quote_before"].replace("不得", "", 1) == c.quote for c in removed
    )
    numbers = corrupter.number_changes(pool[:1])
    assert numbers and all(c.detail["from"] != c.detail["to"] for c in numbers)
    assert all(not corrupter.in_any_article(c.quote, "刑法") for c in numbers)


def test_splice_joins_one_clauses_subject_to_anothers_consequence(db):
    art = db.article(db.current("道路交通安全法"), 91, 0)
    spliced = [s for s, _subject, _consequence in controls.splice_clauses(art.text)]
    assert (
        "饮酒后驾驶机动车的，由公安机关交通管理部门约束至酒醒，吊销机动车驾驶证，依法追究刑事责任" in spliced
    )
    # a splice that happens to be the law's text (再次饮酒后驾驶机动车的，处十日以下拘留) is not kept as a corruption
    kept = controls.Corrupter(db, random.Random(0)).splices([art])
    assert kept and len(kept) < len(spliced)
    assert all(not controls.contained(c.quote, a.text) for c in kept for a in db.articles_of(art.law))


def test_judgment_citations_are_read_from_the_courts_formula():
    text = (
        "（2019）豫0782刑初325号 本院认为，被告人张某醉酒后驾驶机动车……依照《中华人民共和国刑法》第一百三十三条之一第一款第（二）项，"
        "第六十七条第三款，第七十二条第一款、第三款，最高人民法院、最高人民检察院《关于办理盗窃刑事案件适用法律若干问题的解释》第一条之规定，"
        "判决如下： 被告人张某犯危险驾驶罪，判处拘役一个月。 二〇一九年七月二日 书记员李某 附：相关法律条文 《中华人民共和国刑法》 "
        "第五十二条判处罚金，应当根据犯罪情节决定罚金数额。 第六十七条…… 犯罪嫌疑人虽不具有前两款规定的自首情节，但是如实供述自己罪行的，可以从轻处罚。"
    )
    found = [(m.law, m.number, m.suffix, m.paragraph, m.header) for m in controls.judgment_mentions(text)]
    assert found[:4] == [
        ("中华人民共和国刑法", 133, 1, 1, False),
        ("中华人民共和国刑法", 67, 0, 3, False),
        ("中华人民共和国刑法", 72, 0, 1, False),
        ("最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释", 1, 0, None, False),
    ]
    entries = {m.number: m.content for m in controls.judgment_mentions(text) if m.header}
    assert entries[52] == "判处罚金，应当根据犯罪情节决定罚金数额。"
    assert entries[67].startswith("…… 犯罪嫌疑人虽不具有")
    assert controls.written_on(text) == "2019-07-02"


def test_a_judgment_row_keeps_real_quotes_and_drops_altered_ones(db):
    text = (
        "依照《中华人民共和国刑法》第五十二条、第六十四条之规定，判决如下：…… 二〇一八年五月二十四日 附：相关法律条文 《中华人民共和国刑法》 "
        "第五十二条判处罚金，应当根据犯罪情节决定罚金数额。 第六十四条犯罪分子违法所得的一切财物，可以予以追缴。"
    )
    kept, expected, excluded, removed = controls.judgment_row(db, text, "2018-05-24")
    assert removed == 1 and "可以予以追缴" not in kept and "《中华人民共和国刑法》 第五十二条判处罚金" in kept
    assert {(c["article"], c["verdict"]) for c in expected} == {(52, "verified"), (64, "no_content")}
    assert excluded == []


# -- the frozen files ------------------------------------------------------------------------------


def test_the_frozen_controls_match_their_checksums_and_validate():
    sums = controls.read_sums(CONTROLS)
    assert set(sums) >= set(controls.FILES)
    for name, digest in sums.items():
        assert hashlib.sha256((CONTROLS / name).read_bytes()).hexdigest() == digest, (
            f"{name} was edited after freezing"
        )
    rows, notes = bench.load_controls(CONTROLS)
    assert notes == []
    negative = sum(len(r["citations"]) for r in rows if r["control"] == "negative")
    positive = sum(len(r["citations"]) for r in rows if r["control"] == "positive")
    assert negative >= 500 and positive >= 500
    assert {r["style"] for r in rows if r["control"] == "negative"} == {"judgment", "answer"}


CONTROLS_V2 = CONTROLS.parent / "checker_controls_v2"
CONTROLS_V3 = CONTROLS.parent / "checker_controls_v3"
CONTROLS_JUDGMENTS = CONTROLS.parent / "checker_controls_judgments"


@pytest.mark.parametrize(
    "folder", [CONTROLS, CONTROLS_V2, CONTROLS_V3, CONTROLS_JUDGMENTS], ids=["v1", "v2", "v3", "judgments"]
)
def test_frozen_control_files_match_their_sha256sums(folder):
    """v1 (development) and v2 (held out, frozen before the checker fixes of issue 40): no checker involved."""
    sums = controls.read_sums(folder)
    on_disk = {p.name for p in folder.iterdir() if p.suffix in (".jsonl", ".json")}
    assert sums and set(sums) == on_disk, "every data file is listed in SHA256SUMS, and only those"
    for name, digest in sums.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, (
            f"{folder.name}/{name} was edited"
        )


def test_held_out_controls_validate_and_share_no_rows_with_v1():
    rows, notes = bench.load_controls(CONTROLS_V2)  # the format check only; the checker is never run on v2
    assert notes == []
    v1 = bench.load_controls(CONTROLS)[0]
    assert (
        sum(r["control"] == "negative" for r in rows) == 400
        and sum(r["control"] == "positive" for r in rows) == 528
    )
    lines = {
        (r["source"]["file"], r["source"]["line"])
        for r in v1 + rows
        if r["style"] == "answer" and "file" in r["source"]
    }
    assert len(lines) == 800
    assert not {r["text"] for r in v1 if r["control"] == "negative"} & {r["text"] for r in rows}
    stats = json.loads((CONTROLS_V2 / "build_stats.json").read_text(encoding="utf-8"))
    assert stats["held_out_from"]["sums"] == controls.read_sums(CONTROLS)


def test_other_laws_controls_are_held_out_from_v1_and_v2_and_rebuild_byte_for_byte(tmp_path, capsys):
    """v3 (laws other than 刑法 and 民法典; frozen before the checker change it measures): the same files come
    out of the builder, its rows validate, and no positive row is made from a v1/v2 article where another
    was available (only drink_drunk, which has no others, and outdated_version reuse any)."""
    rows, notes = bench.load_controls(CONTROLS_V3)  # the format check only
    assert notes == []
    keys = {c["key"] for r in rows if r["control"] == "negative" for c in r["citations"]}
    assert keys and not keys & {"刑法", "民法典"}
    earlier = controls._used_by(CONTROLS)["articles"] | controls._used_by(CONTROLS_V2)["articles"]
    reused = [
        r["kind"]
        for r in rows
        if r["control"] == "positive"
        and (r["source"]["key"], r["source"]["version"], r["source"]["article"], r["source"]["suffix"])
        in earlier
    ]
    assert set(reused) <= {"drink_drunk", "outdated_version"}
    args = [
        "bench",
        "checker",
        "--build-other-laws",
        "--controls",
        str(tmp_path / "v3"),
        "--data",
        str(SHARED_DATA),
    ]
    args += ["--held-out-from", str(CONTROLS), "--held-out-from", str(CONTROLS_V2)]
    assert main(args) == 0, capsys.readouterr().err
    assert controls.read_sums(tmp_path / "v3") == controls.read_sums(CONTROLS_V3)


def test_disc_judgment_controls_rebuild_byte_for_byte_and_share_nothing_with_v1(tmp_path, capsys):
    rows, notes = bench.load_controls(CONTROLS_JUDGMENTS)
    assert (
        notes == [] and {r["style"] for r in rows} == {"judgment"} and all(r["as_of"] is None for r in rows)
    )
    v1_texts = {r["text"][:200] for r in bench.load_controls(CONTROLS)[0] if r["style"] == "judgment"}
    assert not v1_texts & {r["text"][:200] for r in rows}
    args = [
        "bench",
        "checker",
        "--build-disc-judgments",
        "--controls",
        str(tmp_path / "j"),
        "--data",
        str(SHARED_DATA),
    ]
    assert main(args) == 0, capsys.readouterr().err
    assert controls.read_sums(tmp_path / "j") == controls.read_sums(CONTROLS_JUDGMENTS)


def test_a_few_control_rows_through_the_real_checker(checker):
    rows = [r for r in bench.load_controls(CONTROLS)[0] if r["id"] in ("neg-answer-0001", "pos-0001")]
    scored, _unexpected, _excluded = bench.run(rows, checker)
    assert {s.row for s in scored} == {"neg-answer-0001", "pos-0001"}
    assert all(s.given is not None for s in scored)


# -- the command -----------------------------------------------------------------------------------


def test_cli_missing_controls_folder_is_a_clear_error(tmp_path, capsys):
    assert main(["bench", "checker", "--controls", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert (
        "controls folder" in err
        and "not found" in err
        and "--build-controls" in err
        and "Traceback" not in err
    )


def test_cli_malformed_controls_are_a_clear_error(tmp_path, capsys):
    assert main(["bench", "checker", "--controls", str(tmp_path)]) == 2
    assert "holds no .jsonl file" in capsys.readouterr().err
    (tmp_path / "rows.jsonl").write_text('{"id": "a", "control": "negative"}\n', encoding="utf-8")
    assert main(["bench", "checker", "--controls", str(tmp_path)]) == 2
    assert "rows.jsonl:1: field 'style' missing" in capsys.readouterr().err
    (tmp_path / "rows.jsonl").write_text("{not json\n", encoding="utf-8")
    assert main(["bench", "checker", "--controls", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "rows.jsonl:1: not valid JSON" in err and "Traceback" not in err


def test_cli_runs_a_tiny_controls_folder_and_writes_json(tmp_path, capsys):
    rows = [r for r in bench.load_controls(CONTROLS)[0] if r["id"] in ("neg-answer-0002", "pos-0100")]
    (tmp_path / "tiny.jsonl").write_text(controls.dumps(rows), encoding="utf-8")
    out = tmp_path / "figures.json"
    assert (
        main(
            [
                "bench",
                "checker",
                "--controls",
                str(tmp_path),
                "--json",
                "--out",
                str(out),
                "--resamples",
                "50",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text(encoding="utf-8"))
    assert printed["false_alarms"]["overall"]["n"] == len(rows[0]["citations"])
    assert printed["recall"]["overall"]["n"] == 1
