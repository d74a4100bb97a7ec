"""The law vote of the receptionist (issue 20, item 5): which consultation domains a retrieved article's law
points at, P(domain | article) backed off article → chapter → law → prior, stored as ``law_domains.json``
beside the linear model (:class:`lawluo.agents.receptionist.Receptionist` pools it with its own decision).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

LAW_DOMAINS_FORMAT = 1

#: A retrieved article as the law vote sees it: (law key, chapter heading or "", article number).
HitKey = tuple[str, str, int]


def hit_keys(hits: Iterable) -> list[HitKey]:
    """The (law key, chapter, number) of each :class:`~lawluo.retrieval.statutes.StatuteHit`."""
    return [(h.article.law.key, h.article.chapter or "", int(h.article.number)) for h in hits]


class LawDomains:
    """Which domains a retrieved article's law points at: P(domain | article), learned from counts.

    ``articles``/``chapters``/``laws`` map (law, number) / (law, chapter) / law to the number of times
    a training question of each domain (in ``domains`` order) retrieved it. A level's estimate is
    smoothed towards the level above it with ``smoothing`` pseudo-counts (hierarchical additive
    smoothing, as in Witten-Bell / Dirichlet back-off; Zhai & Lafferty 2004, §2): article → chapter →
    law → ``prior``. ``k``, ``weight`` and ``temperature`` say how the receptionist uses the vote.

    >>> m = LawDomains(("a", "b"), laws={"劳动法": [9, 1]}, smoothing=0.0)
    >>> m.probabilities(("劳动法", "", 3)).round(2).tolist(), m.probabilities(("刑法", "", 1)).tolist()
    ([0.9, 0.1], [0.5, 0.5])
    >>> [law for law, _ in m.top_laws("a")]
    ['劳动法']
    """

    def __init__(
        self,
        domains: Sequence[str],
        *,
        prior: Sequence[float] | None = None,
        laws: dict[str, Sequence[float]] | None = None,
        chapters: dict[tuple[str, str], Sequence[float]] | None = None,
        articles: dict[tuple[str, int], Sequence[float]] | None = None,
        smoothing: float = 2.0,
        k: int = 10,
        weight: float = 1.0,
        temperature: float = 1.0,
    ):
        n = len(domains)
        self.domains = tuple(domains)

        def table(rows) -> dict:
            out = {}
            for key, counts in (rows or {}).items():
                arr = np.asarray(counts, dtype=np.float64)
                if arr.shape != (n,) or not np.isfinite(arr).all() or (arr < 0).any():
                    raise ValueError(f"counts of {key!r} must be {n} non-negative numbers")
                out[key] = arr
            return out

        self.laws, self.chapters, self.articles = table(laws), table(chapters), table(articles)
        self.prior = np.full(n, 1.0 / n) if prior is None else np.asarray(prior, dtype=np.float64)
        if self.prior.shape != (n,) or (self.prior < 0).any() or not self.prior.sum() > 0:
            raise ValueError(f"prior must be {n} non-negative numbers, not all 0")
        self.prior = self.prior / self.prior.sum()
        if not (math.isfinite(smoothing) and smoothing >= 0):
            raise ValueError(f"smoothing must be ≥ 0, not {smoothing}")
        if not (isinstance(k, int) and k >= 1):
            raise ValueError(f"k must be a positive integer, not {k!r}")
        if not (math.isfinite(weight) and weight >= 0 and math.isfinite(temperature) and temperature > 0):
            raise ValueError(f"weight must be ≥ 0 and temperature > 0, not {weight}, {temperature}")
        self.smoothing, self.k, self.weight, self.temperature = (
            float(smoothing),
            k,
            float(weight),
            float(temperature),
        )

    def _smooth(self, counts: np.ndarray | None, parent: np.ndarray) -> np.ndarray:
        if counts is None:
            return parent
        total = counts.sum() + self.smoothing
        return (counts + self.smoothing * parent) / total if total > 0 else parent

    def probabilities(self, key: HitKey) -> np.ndarray:
        """P(domain | the article ``key``), in ``domains`` order."""
        law, chapter, number = key
        p = self._smooth(self.laws.get(law), self.prior)
        p = self._smooth(self.chapters.get((law, chapter)), p)
        return self._smooth(self.articles.get((law, number)), p)

    def vote(self, keys: Sequence[HitKey]) -> np.ndarray:
        """log of the mean P(domain | article) over the first ``k`` retrieved articles (0s when none)."""
        keys = list(keys)[: self.k]
        if not keys:
            return np.zeros(len(self.domains))
        mean = np.mean([self.probabilities(key) for key in keys], axis=0)
        return np.log(np.maximum(mean, 1e-6))

    def top_laws(self, domain: str, n: int = 10, min_count: float = 5.0) -> list[tuple[str, float]]:
        """The ``n`` laws most associated with ``domain``, as (law, P(domain | law) smoothed), ranked by
        that share × the domain's count (laws retrieved at least ``min_count`` times). For a reranker:
        the laws a domain's questions need."""
        if domain not in self.domains:
            raise ValueError(f"未知领域 unknown domain {domain!r}; the map knows {', '.join(self.domains)}")
        i = self.domains.index(domain)
        scored = [
            (law, float(self._smooth(c, self.prior)[i]), float(c[i]))
            for law, c in self.laws.items()
            if c.sum() >= min_count
        ]
        # count × share: laws both frequent in the domain's questions and specific to it
        scored.sort(key=lambda t: (-t[1] * t[2], -t[1], t[0]))
        return [(law, p) for law, p, _ in scored[: max(0, n)]]

    def to_json(self) -> dict:
        def rows(d):  # sparse: {domain id: count} of the domains with a count
            return [
                [
                    *(key if isinstance(key, tuple) else (key,)),
                    {self.domains[i]: round(float(c[i]), 4) for i in np.flatnonzero(c)},
                ]
                for key, c in sorted(d.items())
            ]

        return {
            "format": LAW_DOMAINS_FORMAT,
            "domains": list(self.domains),
            "k": self.k,
            "weight": self.weight,
            "temperature": self.temperature,
            "smoothing": self.smoothing,
            "prior": [round(float(x), 6) for x in self.prior],
            "laws": rows(self.laws),
            "chapters": rows(self.chapters),
            "articles": rows(self.articles),
        }

    @classmethod
    def from_json(cls, data: object) -> LawDomains:
        """The map of :meth:`to_json`; ValueError (saying what) for anything else."""
        if not isinstance(data, dict) or data.get("format") != LAW_DOMAINS_FORMAT:
            raise ValueError(f"not a law-domain map of format {LAW_DOMAINS_FORMAT}")
        try:
            domains = [str(d) for d in data["domains"]]
            index = {d: i for i, d in enumerate(domains)}

            def dense(counts: dict) -> list[float]:
                out = [0.0] * len(domains)
                for d, c in counts.items():
                    out[index[d]] = float(c)  # KeyError: a domain the map does not list
                return out

            laws = {str(law): dense(c) for law, c in data["laws"]}
            chapters = {(str(law), str(ch)): dense(c) for law, ch, c in data["chapters"]}
            articles = {(str(law), int(num)): dense(c) for law, num, c in data["articles"]}
            return cls(
                domains,
                prior=data["prior"],
                laws=laws,
                chapters=chapters,
                articles=articles,
                smoothing=float(data["smoothing"]),
                k=data["k"],
                weight=float(data["weight"]),
                temperature=float(data["temperature"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"law-domain map unreadable: {exc!r}") from exc
