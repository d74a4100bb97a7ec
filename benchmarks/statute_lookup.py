"""Statute lookup by law name and article number: how often the named article comes first.

    python benchmarks/statute_lookup.py [--laws 20] [--per-law 10] [--seed 0]

Queries are built from the statute database itself: ``--per-law`` articles sampled (seeded) from each
of ``--laws`` laws that visitors cite most (the list below, current versions, articles 之一 included),
each written in one of the forms people type, in rotation:

- ``劳动合同法第82条`` (short name, Arabic numerals), ``劳动合同法第八十二条`` (Chinese numerals),
- ``《中华人民共和国劳动合同法》第八十二条`` (full name in brackets), ``劳动合同法82条`` (no 第),
- ``劳动合同法第82条 是什么规定`` (with words after it).

A query counts as found when the first hit of :meth:`StatuteSearcher.search` is that article (same
law, number and 之 suffix). The laws the Civil Code repealed are checked separately: their lookup must
say the law was repealed and name the Civil Code (they have no articles in the database).
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from _common import percentile

from lawluo.config import load_settings
from lawluo.law import StatuteDB
from lawluo.law.numerals import int_to_chinese
from lawluo.retrieval.statutes import StatuteSearcher

#: Laws of everyday consultations (name keys), in the order they are taken.
LAWS = [
    "民法典",
    "刑法",
    "劳动合同法",
    "劳动法",
    "公司法",
    "道路交通安全法",
    "治安管理处罚法",
    "民事诉讼法",
    "刑事诉讼法",
    "消费者权益保护法",
    "社会保险法",
    "行政诉讼法",
    "行政处罚法",
    "著作权法",
    "未成年人保护法",
    "个人所得税法",
    "产品质量法",
    "食品安全法",
    "城市房地产管理法",
    "合伙企业法",
    "土地管理法",
    "商标法",
]
REPEALED = ["合同法", "婚姻法", "继承法", "物权法", "侵权责任法", "担保法", "民法通则", "收养法", "民法总则"]


def number_text(number: int, suffix: int, arabic: bool) -> str:
    n = str(number) if arabic else int_to_chinese(number)
    tail = (f"之{suffix}" if arabic else f"之{int_to_chinese(suffix)}") if suffix else ""
    return n, tail


def query_forms(short: str, full: str, number: int, suffix: int) -> dict[str, str]:
    a, a_tail = number_text(number, suffix, True)
    c, c_tail = number_text(number, suffix, False)
    return {
        "short+arabic": f"{short}第{a}条{a_tail}",
        "short+chinese": f"{short}第{c}条{c_tail}",
        "《full》+chinese": f"《{full}》第{c}条{c_tail}",
        "short+arabic, no 第": f"{short}{a}条{a_tail}",
        "short+arabic+words": f"{short}第{a}条{a_tail} 是什么规定",
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--laws", type=int, default=20)
    parser.add_argument("--per-law", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    settings = load_settings()
    db = StatuteDB(settings.statutes_path)
    searcher = StatuteSearcher.from_settings(settings, db)
    rng = random.Random(args.seed)
    laws = [key for key in LAWS if db.current(key) is not None][: args.laws]

    cases = []
    for key in laws:
        law = db.current(key)
        articles = [a for a in db.articles_of(law) if a.number > 0]
        for k, art in enumerate(
            sorted(rng.sample(articles, min(args.per_law, len(articles))), key=lambda a: a.index)
        ):
            forms = query_forms(key, law.name, art.number, art.suffix)
            form = list(forms)[(len(cases) + k) % len(forms)]
            cases.append((form, forms[form], art))
    # The examples, in every form.
    for key, number, suffix in (("民法典", 1079, 0), ("劳动合同法", 82, 0), ("刑法", 133, 1)):
        art = db.find_article(key, number, suffix)
        for form, query in query_forms(key, db.current(key).name, number, suffix).items():
            cases.append((form, query, art))

    searcher.search("预热 warm-up", 5)
    found, total, misses, times = Counter(), Counter(), [], []
    for form, query, art in cases:
        t = time.perf_counter()
        hits = searcher.search(query, 5)
        times.append(time.perf_counter() - t)
        first = hits[0].article if hits else None
        ok = first is not None and (first.law.key, first.number, first.suffix) == (
            art.law.key,
            art.number,
            art.suffix,
        )
        total[form] += 1
        found[form] += ok
        if not ok:
            misses.append((query, first.law.name + first.label if first else "—"))
    n = sum(total.values())
    print(
        f"{n} name+number queries over {len(laws)} laws ({sum(1 for *_, a in cases if a.suffix)} with 之N):"
    )
    for form in total:
        print(f"  {form:<22} first {found[form]}/{total[form]} = {found[form] / total[form]:.1%}")
    print(f"  {'all':<22} first {sum(found.values())}/{n} = {sum(found.values()) / n:.1%}")
    print(
        f"  search time per query: median {percentile(times, 50) * 1000:.1f} ms, "
        f"p95 {percentile(times, 95) * 1000:.1f} ms"
    )
    for query, got in misses[:10]:
        print(f"  miss: {query} → {got}")

    if not hasattr(searcher, "lookup"):  # run on an older checkout, for the figure before lookup existed
        return
    ok = 0
    for key in REPEALED:
        lookups = searcher.lookup(f"{key}第十条")
        said = bool(lookups) and "已废止" in lookups[0].repeal and "民法典" in lookups[0].repeal
        ok += said
        if not said:
            print(f"  repealed law not reported: {key}")
    print(
        f"repealed laws (Civil Code art. 1260): lookup says 已废止 + names the Civil Code for {ok}/{len(REPEALED)}"
    )
    print(f"  e.g. 合同法第五十二条 → {searcher.lookup('合同法第五十二条')[0].message()}")


if __name__ == "__main__":
    main()
