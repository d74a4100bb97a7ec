"""The receptionist's law vote (issue 20, item 5): the laws of the statutes a question retrieves vote for
a domain; without a searcher the receptionist routes exactly as the linear model alone."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from lawluo.agents.receptionist import (
    LAW_DOMAINS_FILE,
    LawDomains,
    Receptionist,
    ReceptionistAssetError,
    hit_keys,
)
from lawluo.domains import DOMAIN_IDS

from .test_receptionist import tiny

DOMAINS = sorted(DOMAIN_IDS)
LABOR = DOMAINS.index("labor")
MARRIAGE = DOMAINS.index("marriage_family")


def labour_map(weight: float = 3.0, k: int = 5) -> LawDomains:
    """劳动合同法 retrieved by 40 labour questions and 0 others; 民法典 by 10 family and 10 labour ones."""
    laws = {"劳动合同法": [0.0] * len(DOMAINS), "民法典": [0.0] * len(DOMAINS)}
    laws["劳动合同法"][LABOR] = 40.0
    laws["民法典"][LABOR] = laws["民法典"][MARRIAGE] = 10.0
    return LawDomains(DOMAINS, laws=laws, smoothing=1.0, k=k, weight=weight, temperature=1.0)


def hit(law: str, number: int, chapter: str = "") -> SimpleNamespace:
    """What the law vote reads of a StatuteHit."""
    return SimpleNamespace(
        article=SimpleNamespace(law=SimpleNamespace(key=law), chapter=chapter, number=number)
    )


class FakeSearcher:
    """Returns the same hits for every question and counts the calls."""

    def __init__(self, hits=(), error: Exception | None = None):
        self.hits, self.error, self.calls = list(hits), error, []

    def search(self, query: str, k: int = 5):
        self.calls.append((query, k))
        if self.error:
            raise self.error
        return self.hits[:k]


def with_map(model: Receptionist, law_map: LawDomains | None) -> Receptionist:
    model.law_domains = law_map
    return model


def test_retrieved_labour_laws_move_an_unsure_question_to_labour():
    question = "离婚"  # the tiny model: 离/婚 weigh for 婚姻家庭 only
    alone = with_map(tiny(temperature=4.0), labour_map())
    assert alone.classify(question).domain == "marriage_family"
    searcher = FakeSearcher([hit("劳动合同法", n) for n in (39, 40, 46, 47, 82)])
    voted = alone.with_searcher(searcher)
    routing = voted.classify(question)
    assert routing.domain == "labor" and routing.laws == ("劳动合同法",)
    assert routing.as_dict()["laws"] == ["劳动合同法"]
    assert searcher.calls == [("离婚", 5)]  # the prepared question, the map's k
    # A shared 民法典 hit splits its vote: labour gains less than from 劳动合同法 alone.
    mixed = alone.with_searcher(FakeSearcher([hit("民法典", 1079)] * 5)).classify(question)
    assert mixed.scores["labor"] < routing.scores["labor"]
    assert alone.classify(question).domain == "marriage_family"  # with_searcher left the original alone


def test_without_searcher_or_with_weight_0_routing_is_exactly_the_linear_models():
    plain = tiny(temperature=2.0)
    question = "公司拖欠工资，我想离婚"
    expected = plain.classify(question)
    for model in (
        with_map(tiny(temperature=2.0), labour_map()),  # a map, no searcher
        with_map(tiny(temperature=2.0), labour_map()).with_searcher(None),
    ):
        assert model.classify(question) == expected and not model.uses_laws
    silent = FakeSearcher([hit("劳动合同法", 39)])
    zero = with_map(tiny(temperature=2.0), labour_map(weight=0.0)).with_searcher(silent)
    assert zero.classify(question) == expected and silent.calls == []  # weight 0: no search at all
    assert expected.laws == () and "laws" not in expected.as_dict()


def test_a_failing_searcher_leaves_the_routing_to_the_linear_model(caplog):
    model = with_map(tiny(), labour_map()).with_searcher(FakeSearcher(error=RuntimeError("index gone")))
    assert model.classify("离婚") == tiny().classify("离婚")
    assert "routing without the law vote" in caplog.text


def test_the_map_backs_off_from_article_to_chapter_to_law_to_prior():
    m = LawDomains(
        ("a", "b"),
        prior=[3, 1],
        laws={"民法典": [5, 5]},
        chapters={("民法典", "婚姻家庭编"): [9, 1]},
        articles={("民法典", 1079): [0, 10]},
        smoothing=2.0,
    )
    assert m.probabilities(("刑法", "", 1)).tolist() == [0.75, 0.25]
    law = (np.array([5, 5]) + 2 * np.array([0.75, 0.25])) / 12
    assert m.probabilities(("民法典", "合同编", 500)) == pytest.approx(law)
    chapter = (np.array([9, 1]) + 2 * law) / 12
    assert m.probabilities(("民法典", "婚姻家庭编", 1)) == pytest.approx(chapter)
    assert m.probabilities(("民法典", "婚姻家庭编", 1079)) == pytest.approx(
        (np.array([0, 10]) + 2 * chapter) / 12
    )
    assert m.vote([]).tolist() == [0.0, 0.0]
    assert LawDomains.from_json(json.loads(json.dumps(m.to_json()))).to_json() == m.to_json()


@pytest.mark.parametrize(
    "change",
    [
        {"format": 2},
        {"laws": [["劳动法", [1, 2]]]},  # counts must be {domain: count}
        {"laws": [["劳动法", {"labor": -1.0}]]},
        {"laws": [["劳动法", {"astrology": 1.0}]]},
        {"laws": "劳动法"},
        {"articles": [["劳动法", "第一条", {"labor": 1.0}]]},
        {"k": 0},
        {"weight": float("nan")},
        {"temperature": 0},
        {"domains": "labor"},
    ],
)
def test_a_hostile_map_file_is_refused_with_the_rebuild_command(tmp_path, change):
    write_tiny_asset(tmp_path, labour_map())
    assert Receptionist.from_dir(tmp_path).law_domains.to_json() == labour_map().to_json()
    data = json.loads((tmp_path / LAW_DOMAINS_FILE).read_text(encoding="utf-8"))
    (tmp_path / LAW_DOMAINS_FILE).write_text(json.dumps({**data, **change}), encoding="utf-8")
    with pytest.raises(ReceptionistAssetError, match="rebuild it with"):
        Receptionist.from_dir(tmp_path, searcher=FakeSearcher())
    # Without a searcher the map is not read: the linear model loads and routes as before.
    alone = Receptionist.from_dir(tmp_path)
    assert alone.classify("离婚").scores == pytest.approx(tiny().classify("离婚").scores)
    with pytest.raises(ReceptionistAssetError, match="rebuild it with"):
        alone.domain_laws("labor")
    with pytest.raises(ReceptionistAssetError, match="rebuild it with"):
        alone.with_searcher(FakeSearcher())


def test_a_map_trained_to_weight_0_is_neither_read_nor_searched(tmp_path):
    write_tiny_asset(tmp_path, labour_map(weight=0.0))
    (tmp_path / LAW_DOMAINS_FILE).write_text("not json", encoding="utf-8")  # never read
    searcher = FakeSearcher([hit("劳动合同法", 39)])
    model = Receptionist.from_dir(tmp_path, searcher=searcher)
    assert model.classify("离婚").scores == pytest.approx(tiny().classify("离婚").scores)
    assert searcher.calls == [] and not model.uses_laws


def write_tiny_asset(path, law_map: LawDomains) -> None:
    """The tiny model of test_receptionist with ``law_map``, written as training writes an asset."""
    from training.train_receptionist import Fitted, write_asset

    model = tiny()
    fitted = Fitted(
        domains=DOMAINS,
        vocab=list(model._column),
        idf=model._idf,
        weights=model._weights,
        bias=model._bias,
        keywords=[],
        keyword_scale=0.0,
        temperature=1.0,
        ngram_range=(1, 1),
        params={},
        tuning=[],
        n_weak=0,
        n_dev=0,
        check=([], np.zeros((0, len(DOMAINS)))),
        law_domains=law_map,
    )
    write_asset(fitted, path)


def test_domain_laws_gives_the_laws_a_domain_needs():
    model = with_map(tiny(), labour_map())
    assert [law for law, _ in model.domain_laws("labor", 2)] == ["劳动合同法", "民法典"]
    assert model.domain_laws("劳动纠纷", 1)[0][0] == "劳动合同法"  # by name as well as id
    with pytest.raises(ValueError, match="unknown domain"):
        model.domain_laws("astrology")
    with pytest.raises(ValueError, match="no law-domain map"):
        tiny().domain_laws("labor")


def test_the_shipped_map_knows_the_laws_of_labour_and_traffic(receptionist):
    if receptionist.law_domains is None:
        pytest.skip("assets/receptionist was trained without the law vote")
    assert "劳动合同法" in [law for law, _ in receptionist.domain_laws("labor", 5)]
    assert "道路交通安全法" in [law for law, _ in receptionist.domain_laws("traffic", 5)]


def test_the_vote_weight_is_chosen_on_out_of_fold_decisions():
    from training.train_receptionist import ReceptionistConfig, _tune_vote

    cfg = ReceptionistConfig(tune=False, vote_k_grid=[1], vote_weight_grid=[0.0, 1.0, 5.0])
    yd = np.array([LABOR, MARRIAGE] * 10)
    base = np.zeros((len(yd), len(DOMAINS)))
    base[:, MARRIAGE] = 0.5  # the linear model says 婚姻家庭 for everyone: right half the time
    m = labour_map()
    informative = [[("劳动合同法", "", 1)] if y == LABOR else [("刑法", "", 1)] for y in yd]
    k, w, temperature, table = _tune_vote(m, informative, base, yd, cfg, log=lambda *_: None)
    assert (k, w) == (1, 1.0) and temperature > 0 and len(table) == 3
    useless = [[("刑法", "", 1)]] * len(yd)  # the same vote for every question: weight 0 wins the tie
    assert _tune_vote(m, useless, base, yd, cfg, log=lambda *_: None)[:2] == (1, 0.0)


def test_hit_keys_read_law_chapter_and_number():
    assert hit_keys([hit("民法典", 1079, "第四章 离婚")]) == [("民法典", "第四章 离婚", 1079)]
