"""ToLC: the tree's ids, marks and pruning; building it level by level from a clarifier model, and from
the retrieved cases when there is no model or the model fails."""

from __future__ import annotations

import json
import threading

import pytest

from lawluo.llm import LLMTimeout
from lawluo.tolc import Tree, TreeBuilder, statement_key

from .fakes.scripted_backend import ScriptedBackend

QUESTION = "我在公司工作两年一直没签劳动合同，现在老板要辞退我，我能要求赔偿吗？"


def small_tree() -> Tree:
    tree = Tree.start(QUESTION, height=3, k=2)
    for statement in ("是否签订了书面劳动合同？", "是否已被辞退？"):
        tree.add_child("0", statement, [])
    for parent in ("1", "2"):
        for i in (1, 2):
            tree.add_child(parent, f"要素 {parent}.{i}？", [])
    return tree


def test_node_ids_are_paths_and_levels_are_breadth_first():
    tree = small_tree()
    assert [n.id for n in tree.nodes] == ["0", "1", "2", "1.1", "1.2", "2.1", "2.2"]
    assert [n.id for n in tree.path("2.1")] == ["2", "2.1"]
    assert [n.depth for n in tree.level(2)] == [2, 2, 2, 2]


def test_a_no_prunes_the_subtree_and_only_visible_marks_count():
    tree = small_tree()
    tree.mark("1.1", "yes")
    tree.mark("2", "yes")
    tree.mark("2.2", "no")
    assert tree.confirmed() == ["是否已被辞退？", "要素 1.1？"]  # breadth-first
    tree.mark("1", "no")
    assert [n.id for n in tree.visible()] == ["1", "2", "2.1", "2.2"]
    assert tree.confirmed() == ["是否已被辞退？"]  # 1.1's yes sits under a no now
    assert tree.denied() == ["是否签订了书面劳动合同？", "要素 2.2？"]


def test_marks_are_validated():
    tree = small_tree()
    with pytest.raises(ValueError, match="mark 'maybe' is not one of yes, no, unknown"):
        tree.mark("1", "maybe")
    with pytest.raises(ValueError, match="the root is the client's question"):
        tree.mark("0", "yes")
    with pytest.raises(KeyError, match="no node '9'"):
        tree.mark("9", "yes")


def test_a_tree_survives_json():
    tree = small_tree()
    tree.mark("1", "no")
    again = Tree.from_dict(json.loads(json.dumps(tree.to_dict(), ensure_ascii=False)))
    assert again == tree and again.denied() == tree.denied()


def test_duplicate_statements_differ_only_in_punctuation_and_phrasing_particles():
    assert statement_key("是否签订了书面劳动合同？") == statement_key(
        "您签订了书面劳动合同吗".replace("吗", "")
    )
    assert statement_key("是否已被辞退？") != statement_key("是否已领取工资？")


def fake_cases(case_searcher):
    calls = []

    def search(query: str, k: int):
        calls.append(query)
        return [hit.case for hit in case_searcher.search(query, k)]

    return search, calls


def elements_responder(k: int):
    counter, lock = [0], threading.Lock()

    def reply(messages):
        with lock:
            counter[0] += 1
            n = counter[0]
        case_ids = [
            line[1:].split("]")[0] for line in messages[-1]["content"].splitlines() if line.startswith("[")
        ]
        return json.dumps(
            {
                "elements": [
                    {"statement": f"第{n}次调用的要素{i}？", "case_ids": case_ids[:1] + ["made-up"]}
                    for i in range(k)
                ]
            },
            ensure_ascii=False,
        )

    return reply


def test_a_model_expands_each_level_in_one_parallel_round(case_searcher):
    search, queries = fake_cases(case_searcher)
    model = ScriptedBackend(responder=elements_responder(3))
    levels = list(TreeBuilder(search, model, height=3, k=3).levels(QUESTION))
    assert len(levels) == 2 and levels[-1].complete and not levels[0].complete
    tree = levels[-1]
    assert (len(tree.level(1)), len(tree.level(2))) == (3, 9)
    assert tree.source == "model" and tree.notes == []
    assert len(model.calls) == 4 and len(queries) == 4
    assert queries[0] == QUESTION and tree.level(1)[0].statement in queries[1] + queries[2] + queries[3]
    for node in tree.elements:  # case ids the model made up are dropped; real ones kept
        assert "made-up" not in node.case_ids and len(node.case_ids) == 1
    system, user = model.calls[0][0][0]["content"], model.calls[0][0][1]["content"]
    assert "法律要素" in system and QUESTION in user and "JSON" in user


def test_duplicates_across_the_tree_are_dropped(case_searcher):
    search, _ = fake_cases(case_searcher)
    same = json.dumps(
        {"elements": [{"statement": "是否签订了书面劳动合同？"}, {"statement": "您是否签订了书面劳动合同"}]},
        ensure_ascii=False,
    )
    tree = TreeBuilder(search, ScriptedBackend(responder=lambda m: same), height=3, k=2).build(QUESTION)
    assert [n.statement for n in tree.elements if n.source == "model"] == ["是否签订了书面劳动合同？"]
    assert all(n.fallback == "too_few" for n in tree.elements if n.source != "model")  # topped up to K


def test_broken_json_twice_falls_back_to_the_cases_for_that_node_and_says_so(case_searcher):
    search, _ = fake_cases(case_searcher)
    model = ScriptedBackend("这不是JSON", "仍然不是", responder=elements_responder(2))
    tree = TreeBuilder(search, model, height=2, k=2).build(QUESTION)
    assert len(tree.level(1)) == 2
    # the note is plain words for a visitor; the error's type goes to the log
    assert any("澄清模型的输出不是有效的 JSON" in note for note in tree.notes)
    assert not any("StructuredOutputError" in note for note in tree.notes)
    assert all(n.case_ids for n in tree.level(1))  # read off real cases


def test_a_timeout_of_the_clarifier_falls_back_too(case_searcher):
    search, _ = fake_cases(case_searcher)
    model = ScriptedBackend(LLMTimeout("no answer within 1 s"))
    tree = TreeBuilder(search, model, height=2, k=3).build(QUESTION)
    assert tree.level(1) and any("澄清模型超时" in note and "LLMTimeout" not in note for note in tree.notes)


def test_without_a_model_the_tree_is_read_off_the_cases_and_says_so(case_searcher):
    search, _ = fake_cases(case_searcher)
    tree = TreeBuilder(search, None, height=3, k=3).build("朋友借了我五万块钱不还，只有微信转账记录怎么办")
    assert tree.source == "cases" and "未配置语言模型" in tree.notes[0]
    assert len(tree.level(1)) == 3 and tree.level(2)
    known = {c.id for c in case_searcher.cases}
    assert all(n.case_ids and set(n.case_ids) <= known for n in tree.elements)
    assert all(n.statement.endswith("？") for n in tree.elements)


def test_height_and_k_are_bounded():
    with pytest.raises(ValueError, match="height must be 2–5 and k 1–6"):
        TreeBuilder(lambda q, k: [], None, height=9, k=3)
