"""The law→domain map of the receptionist's law vote (issue 20, item 5; see :mod:`training.train_receptionist`):
weak questions, none near a LawBench dev question, are searched with the app's statute searcher, and the
counts domain × retrieved law, chapter and article become a :class:`lawluo.agents.law_domains.LawDomains`.
"""

from __future__ import annotations

import random
import time
from collections import Counter

from training.receptionist_data import ReceptionistConfig, WeakSet


def char_grams(text: str, n: int = 6) -> set[str]:
    """The character n-grams of ``text`` without punctuation or spaces.

    >>> sorted(char_grams("工资, 拖欠", 3))
    ['工资拖', '资拖欠']
    """
    text = "".join(ch for ch in text if ch.isalnum())
    return {text[i : i + n] for i in range(len(text) - n + 1)}


def near_duplicates(texts: list[str], others: list[str], share: float = 0.5) -> list[bool]:
    """For each of ``texts``: does it share more than ``share`` of its (or the other's, the shorter's)
    character 6-grams with one of ``others``? The rule of ``lawluo/retrieval/expansions.py``.

    >>> near_duplicates(["我想离婚孩子抚养权归谁呢", "公司拖欠工资怎么办"], ["请问我想离婚孩子抚养权归谁"])
    [True, False]
    """
    grams = [char_grams(o) for o in others]
    index: dict[str, list[int]] = {}
    for i, gs in enumerate(grams):
        for g in gs:
            index.setdefault(g, []).append(i)
    out = []
    for text in texts:
        mine = char_grams(text)
        overlap = Counter(i for g in mine for i in index.get(g, ()))
        out.append(any(c / max(1, min(len(mine), len(grams[i]))) > share for i, c in overlap.items()))
    return out


def searched(searcher, texts: list[str], k: int) -> list[list]:
    """The (law, chapter, number) of the ``k`` articles ``searcher`` returns for each text."""
    from lawluo.agents.receptionist import hit_keys

    return [hit_keys(searcher.search(t, k)) for t in texts]


def learn_law_domains(weak: WeakSet, searcher, exclude: list[str], cfg: ReceptionistConfig, log=print):
    """The law→domain map (counts; k/weight set later by :func:`fit`) from up to
    ``cfg.vote_max_per_domain`` weak questions per domain, none near one of ``exclude``; and counts."""
    from lawluo.agents.receptionist import LawDomains

    domains = sorted(cfg.domains().ids)
    near = near_duplicates(weak.texts, exclude)
    by: dict[str, list[int]] = {}
    for i, (dom, is_near) in enumerate(zip(weak.labels, near, strict=True)):
        if not is_near:
            by.setdefault(dom, []).append(i)
    rng = random.Random(cfg.seed)
    chosen = sorted(
        i for rows in by.values() for i in rng.sample(rows, min(len(rows), cfg.vote_max_per_domain))
    )
    start = time.perf_counter()
    keys = searched(searcher, [weak.texts[i] for i in chosen], cfg.vote_map_k)
    n = len(domains)
    laws: dict = {}
    chapters: dict = {}
    articles: dict = {}
    per_domain = [0.0] * n
    for i, hits in zip(chosen, keys, strict=True):
        d = domains.index(weak.labels[i])
        per_domain[d] += 1
        for law, chapter, number in hits:
            for table, key in ((laws, law), (chapters, (law, chapter)), (articles, (law, number))):
                table.setdefault(key, [0.0] * n)[d] += 1
    stats = {
        "near_dev": int(sum(near)),
        "searched": len(chosen),
        "seconds": round(time.perf_counter() - start, 1),
        "laws": len(laws),
        "articles": len(articles),
    }
    log(
        f"law→domain map: {len(chosen)} weak questions searched (top {cfg.vote_map_k}; {stats['near_dev']} near a "
        f"dev question left out) in {stats['seconds']}s; {len(laws)} laws, {len(articles)} articles"
    )
    lawmap = LawDomains(
        domains,
        prior=[max(c, 1.0) for c in per_domain],
        laws=laws,
        chapters=chapters,
        articles=articles,
        smoothing=cfg.vote_smoothing,
        k=max(cfg.vote_k_grid),
    )
    return lawmap, stats


def law_vote_inputs(cfg: ReceptionistConfig, weak: WeakSet, dev_texts: list[str], log=print):
    """The app's statute searcher (from ``cfg``'s settings), the law→domain map learned with it, its
    counts, and the searched articles of every dev question (top ``max(vote_k_grid)``)."""
    from lawluo.agents.receptionist import prepare
    from lawluo.law import StatuteDB
    from lawluo.retrieval.statutes import StatuteSearcher

    settings = cfg.settings()
    searcher = StatuteSearcher.from_settings(settings, StatuteDB(settings.statutes_path))
    law_map, stats = learn_law_domains(weak, searcher, dev_texts, cfg, log)
    dev_keys = searched(searcher, [prepare(t) for t in dev_texts], max(cfg.vote_k_grid))
    return law_map, stats, dev_keys
