"""``python -m lawluo build all --data DIR`` gives the same bytes twice; the data layout and the fetch script.

The build runs on a tiny data folder in the layout of ``lawluo/data_sources.py`` (the supervision tests'
``write_tiny_data`` plus a few statutes, a typical case, CAIL facts and the remaining files). The fetch
script cannot reach GitHub here: it is run against a local git repository standing in for the remote.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from lawluo.build import STEP_INPUTS, MissingData, build, check_data
from lawluo.config import Settings
from lawluo.data_sources import SOURCES, Item, Source, file_sha256, tree_sha256

from .conftest import ROOT, SHARED_DATA
from .test_supervision import CODE_1087, write_tiny_data

CIVIL_CODE = f"""# 中华人民共和国民法典

# 婚姻家庭编

2020年5月28日 第十三届全国人民代表大会第三次会议通过

<!-- INFO END -->

## 第四章 离婚

第一千零七十九条 夫妻一方要求离婚的，可以由有关组织进行调解或者直接向人民法院提起离婚诉讼。

第一千零八十七条 {CODE_1087}
"""
CRIMINAL_LAW = """# 中华人民共和国刑法

<!-- INFO END -->

## 第二章 危害公共安全罪

第一百三十三条之一 在道路上驾驶机动车，醉酒驾驶机动车的，处拘役，并处罚金。

第二百六十四条 盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制，并处或者单处罚金。
"""
TYPICAL_CASE = """# 劳动者拒绝违法超时加班安排，用人单位不得解除劳动合同

<!-- INFO END -->

## 张某诉某快递公司劳动合同纠纷案

## 基本案情

张某入职某快递公司，公司要求每天加班，张某拒绝，公司以此解除劳动合同。张某申请仲裁，请求支付违法解除劳动合同赔偿金。

## 裁判结果

法院判决公司支付赔偿金。依据《中华人民共和国民法典》第一千零七十九条。
"""


def write_layout(root: Path) -> None:
    """A tiny data folder with every path ``build all`` reads."""
    write_tiny_data(root)
    for rel, text in (
        ("laws/民法典/婚姻家庭编.md", CIVIL_CODE),
        ("laws/刑法/刑法.md", CRIMINAL_LAW),
        ("laws/案例/劳动人事/张某诉某快递公司劳动合同纠纷案.md", TYPICAL_CASE),
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    facts = "事实:被告人王某在超市内窃取他人手机一部，价值3000元。\r\n罪名:盗窃。"
    for name, output in (("articles", "法条:刑法第264条"), ("terms", "刑期:6个月")):
        row = {"id": f"lb3{'1' if name == 'articles' else '4'}-0", "input": facts, "output": output}
        (root / f"lawbench/criminal_facts_{name}.jsonl").write_text(
            json.dumps(row, ensure_ascii=False) + "\n"
        )
    row = {"id": "lb24-0", "question": "离婚后孩子归谁抚养", "label": "婚姻家庭"}
    (root / "lawbench/domain_questions.dev.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n")
    for name in ("exam_985.json", "term_qa_3125.json"):
        rows = [{"question": "醉驾会被判刑吗", "answer": "依据《刑法》第一百三十三条之一，处拘役。"}]
        (root / "lawluo_kinled" / name).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    write_layout(root)
    return root


def test_build_all_twice_gives_byte_identical_assets(tiny_data, tmp_path):
    built = []
    for name in ("a", "b"):
        settings = Settings(assets_dir=tmp_path / name, cache_dir=tmp_path / f"{name}-index")
        summary = build("all", tiny_data, settings)
        assert summary["statutes"]["articles"] == 4 and summary["cases"]["cases"] == 2
        built.append(digests(tmp_path / name))
    first, second = built
    for asset in (
        "statutes.sqlite",
        "statutes.PROVENANCE.md",
        "cases.jsonl.gz",
        "cases.PROVENANCE.md",
        "clarifications.jsonl.gz",
        "statute_expansions.jsonl.gz",
        "supervision.jsonl.gz",
        "statute_reranker.json",
        "statute_reranker.PROVENANCE.md",
    ):
        assert asset in first, asset
    assert first == second
    for gz in (tmp_path / "a").glob("*.gz"):  # no file name, mtime 0: the bytes do not depend on where
        head = gz.read_bytes()[:10]
        assert head[3] & 0x08 == 0 and head[4:8] == b"\0\0\0\0", gz.name


def test_a_missing_source_names_its_path_and_the_fetch_command(tiny_data, tmp_path):
    partial = tmp_path / "data"
    (partial / "laws").mkdir(parents=True)
    check_data("statutes", partial)  # laws/ is all the statutes read
    with pytest.raises(MissingData) as caught:
        build("cases", partial, Settings(assets_dir=tmp_path / "assets", cache_dir=tmp_path / "index"))
    message = str(caught.value)
    assert str(partial / "disc" / "qa_short_answer.jsonl") in message
    assert f"python scripts/fetch_data.py --dest {partial}" in message and "--only disc" in message
    assert not (tmp_path / "assets" / "cases.jsonl.gz").exists()


def test_the_cli_reports_a_missing_data_folder_without_a_traceback(tmp_path, capsys):
    from lawluo.cli import main

    assert main(["build", "all", "--data", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "scripts/fetch_data.py --dest" in err and "Traceback" not in err


def test_every_input_of_a_step_is_a_path_of_the_layout_and_the_builders_agree():
    from lawluo.retrieval import supervision
    from lawluo.tolc import mining

    targets = {i.target for s in SOURCES for i in s.items}
    for step, inputs in STEP_INPUTS.items():
        for path in inputs:
            assert path in targets or path.startswith("laws/"), (step, path)
    assert {f for f, *_ in mining.SOURCES.values()} <= set(STEP_INPUTS["clarifications"])
    assert {f for f, *_ in supervision.SOURCES.values()} <= set(STEP_INPUTS["supervision"])


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is missing")
def test_the_layout_table_matches_the_data_the_assets_were_built_from():
    for src in SOURCES:
        for item in src.items:
            path = SHARED_DATA / item.target
            got = tree_sha256(path) if item.how == "tree" else file_sha256(path)
            assert got == item.sha256, item.target
    dev = json.loads((ROOT / "scripts" / "dev_split.json").read_text())
    for target, indices in dev.items():
        ids = [json.loads(line)["id"] for line in (SHARED_DATA / target).open(encoding="utf-8")]
        assert [int(i.rsplit("-", 1)[1]) for i in ids] == indices, target


# -- the fetch script, against a local repository ------------------------------------------------------


def load_fetch():
    spec = importlib.util.spec_from_file_location("fetch_data", ROOT / "scripts" / "fetch_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(*args, cwd):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


@pytest.fixture
def remote(tmp_path) -> tuple[Path, str]:
    """A git repository with upstream-shaped files; returns (path, commit)."""
    repo = tmp_path / "remote"
    files = {
        "db.sqlite3": b"index",
        "刑法/刑法.md": CRIMINAL_LAW.encode(),
        "README.md": b"not kept",
        "data/zero_shot/3-8.json": json.dumps(
            [{"instruction": "i", "question": f"q{i}", "answer": f"a{i}"} for i in range(4)],
            ensure_ascii=False,
        ).encode(),
        "predictions/zero_shot/S1/3-8.json": json.dumps(
            {str(i): {"origin_prompt": "p", "prediction": f"s1-{i}", "refr": "r"} for i in range(4)}
        ).encode(),
        "data/advice.json": json.dumps(
            [[{"input": "", "instruction": "问", "output": "答"}]], ensure_ascii=False
        ).encode(),
        "Datasets /crlf.json": b'[\r\n  {"question": "q"}\r\n]',
    }
    for rel, data in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
    git("init", "-q", cwd=repo)
    git("config", "uploadpack.allowFilter", "true", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "data", cwd=repo)
    (repo / "data" / "advice.json").write_bytes(b"[]")  # a later commit must not be what is fetched
    git("commit", "-q", "-am", "later", cwd=repo)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD~1"], cwd=repo, capture_output=True, text=True, check=True
    )
    return repo, commit.stdout.strip()


def test_fetch_lays_out_each_kind_of_file_at_the_pinned_commit(remote, tmp_path):
    fetch = load_fetch()
    repo, commit = remote
    expected = {
        "t/consult.dev.jsonl": '{"id": "lb38-1", "question": "q1", "reference": "a1"}\n'
        '{"id": "lb38-3", "question": "q3", "reference": "a3"}\n',
        "t/predictions.dev.jsonl": '{"id": "lb38-1", "system": "S1", "answer": "s1-1"}\n'
        '{"id": "lb38-3", "system": "S1", "answer": "s1-3"}\n',
        "t/advice.jsonl": '[{"input": "", "instruction": "问", "output": "答"}]\n',
    }
    sha = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in expected.items()}
    crlf = b'[\r\n  {"question": "q"}\r\n]'
    laws = tmp_path / "laws-expected"
    (laws / "刑法").mkdir(parents=True)
    (laws / "db.sqlite3").write_bytes(b"index")
    (laws / "刑法" / "刑法.md").write_text(CRIMINAL_LAW, encoding="utf-8")
    src = Source(
        "t",
        "example/t",
        commit[:7],  # a short commit, as data/SOURCES.md pins some
        "test",
        (
            Item("t/laws/", ("",), "tree", tree_sha256(laws), 2, "statutes", keep=("db.sqlite3", "刑法")),
            Item(
                "t/consult.dev.jsonl",
                ("data/zero_shot/3-8.json",),
                "lawbench",
                sha["t/consult.dev.jsonl"],
                2,
                "",
                (("question", "question"), ("reference", "answer")),
                "lb38-",
            ),
            Item(
                "t/predictions.dev.jsonl",
                ("predictions/zero_shot/S1/3-8.json",),
                "predictions",
                sha["t/predictions.dev.jsonl"],
                2,
                "",
                prefix="lb38-",
                systems=("S1",),
            ),
            Item("t/advice.jsonl", ("data/advice.json",), "jsonl", sha["t/advice.jsonl"], 1, ""),
            Item(
                "t/crlf.json",
                ("Datasets/crlf.json", "Datasets /crlf.json"),
                "copy",
                "0" * 64,
                1,
                "",
            ),
        ),
    )
    dev = {"t/consult.dev.jsonl": [1, 3], "t/predictions.dev.jsonl": [1, 3]}
    dest, lines = tmp_path / "dest", []
    differs = fetch.fetch_source(src, dest, tmp_path / "work", dev, url=repo.as_uri(), say=lines.append)
    assert differs == ["t/crlf.json"]  # its sha256 above is wrong: reported, not hidden
    for target, text in expected.items():
        assert (dest / target).read_text(encoding="utf-8") == text
    assert (dest / "t/crlf.json").read_bytes() == crlf  # bytes as git stores them: CRLF kept
    assert (
        f"  t/crlf.json: differs from the file the assets were built from (sha256 {hashlib.sha256(crlf).hexdigest()[:12]}…, expected 000000000000…)"
        in lines
    )
    assert "q0" not in (dest / "t/consult.dev.jsonl").read_text()  # the held-back half is not written
    assert sorted(p.relative_to(dest / "t/laws").as_posix() for p in (dest / "t/laws").rglob("*.*")) == [
        "db.sqlite3",
        "刑法/刑法.md",
    ]
    assert any("t/consult.dev.jsonl: ok" in line for line in lines)
    lines.clear()
    fetch.fetch_source(src, dest, tmp_path / "work", dev, url=repo.as_uri(), say=lines.append)  # again
    assert "  t/laws/: ok (already there, 2 files)" in lines


def test_fetch_failures_are_one_clear_line(remote, tmp_path, capsys):
    fetch = load_fetch()
    repo, _ = remote
    src = Source(
        "t", "example/t", "0" * 40, "test", (Item("t/a.jsonl", ("data/advice.json",), "jsonl", "", 1, ""),)
    )
    with pytest.raises(
        fetch.FetchError, match="git checkout 0000000000000000000000000000000000000000 failed"
    ):
        fetch.fetch_source(src, tmp_path / "dest", tmp_path / "work", {}, url=repo.as_uri(), say=print)
    item = Item(
        "t/x.dev.jsonl", ("data/zero_shot/3-8.json",), "lawbench", "", 1, "", (("q", "question"),), "lb-"
    )
    with pytest.raises(fetch.FetchError, match="dev split needs index 9"):
        fetch.convert(item, {"data/zero_shot/3-8.json": b'[{"question": "q"}]'}, {"t/x.dev.jsonl": [9]})
    with pytest.raises(fetch.FetchError, match="none of data/zero_shot/3-8.json exists"):
        fetch.convert(item, {}, {"t/x.dev.jsonl": [0]})


def test_fetch_plan_needs_no_network_and_rejects_unknown_sources(capsys):
    fetch = load_fetch()
    assert fetch.main(["--dest", "/tmp/d", "--plan", "--only", "laws,disc"]) == 0
    out = capsys.readouterr().out
    assert "LawRefBook/Laws.git @ 2f4c5c2" in out and "/tmp/d/disc/qa_short_answer.jsonl" in out
    with pytest.raises(SystemExit):
        fetch.main(["--dest", "/tmp/d", "--only", "nope"])
    assert "unknown source nope" in capsys.readouterr().err


def test_build_help_documents_the_layout_and_the_fetch_command(capsys):
    from lawluo.cli import main

    with pytest.raises(SystemExit) as done:
        main(["build", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "scripts/fetch_data.py --dest DIR" in out and "data/SOURCES.md" in out
    for src in SOURCES:
        assert f"{src.name}/" in out and src.repo in out
        for item in src.items:
            assert item.target.rsplit("/", 1)[-1] in out or item.how == "tree", item.target
