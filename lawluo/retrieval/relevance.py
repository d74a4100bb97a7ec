"""A calibrated relevance per statute hit: the chance that a lawyer would cite the article for the question.

    model = load_relevance(assets / FILENAME)              # None when the asset is missing or broken
    p = model.probability(features_of(...), dense=True)    # array of P(relevant), one per hit

A search engine's score says which article comes first, not whether any is right: BM25 grows with the
query's length, and reciprocal-rank scores are the same for a question the index knows well and for one
it has no article for. The page needs a number that means the same for every question (how sure to show
a statute with a tick, when to say none was found), so each hit gets ``relevance``: Platt scaling (Platt
1999, "Probabilistic Outputs for Support Vector Machines", §2: a logistic regression on the ranker's
outputs) over a few features of the hit that every search has:

- ``log_rank``: log(1 + rank) in the final list;
- ``score_rel``: the hit's score over the first hit's;
- ``bm25_per_token``: the article's BM25 × priors score over the query's token count (how much of the
  question the article's own words match, in absolute terms);
- ``cosine``: the e5 cosine of question and article (with the dense first stage; the pool's lowest cosine
  for an article outside it), and ``dense`` (1 when that first stage ran) — two models are fitted, one
  with and one without the encoder, and the one that matches the search is used.

Fitted by ``python -m lawluo build relevance`` (:mod:`lawluo.build.relevance_training`) on the
evaluation rows of the supervision — the LawBench dev questions and the lay sets (fresh 1–4, train 1–4; label:
the article is one the reference answer or the lay label cites) —, never on fresh5 or a later fresh set, nor a held-out source it is
reported on (``benchmarks/retrieval_fresh.py`` prints its reliability).
The asset is a few numbers; a hostile or broken file is ignored (no ``relevance`` shown), never raised.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

FILENAME = "statute_relevance.json"
FORMAT = "lawluo-statute-relevance/1"
REBUILD_COMMAND = "python -m lawluo build relevance"
SPARSE_FEATURES = ("log_rank", "score_rel", "bm25_per_token")
DENSE_FEATURES = (*SPARSE_FEATURES, "cosine")
_MAX_BYTES = 100_000


def features(
    rank: int, score: float, top: float, bm25: float, tokens: int, cosine: float | None
) -> list[float]:
    """One hit's features in the order of :data:`DENSE_FEATURES` (``cosine`` left out when None)."""
    row = [math.log1p(rank), score / top if top > 0 else 0.0, bm25 / max(1, tokens)]
    return row if cosine is None else [*row, cosine]


@dataclass(frozen=True)
class Platt:
    """``P = 1 / (1 + exp(-(w·x + b)))`` over standardised features (``(x - mean) / scale``)."""

    names: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def probability(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.float64).reshape(-1, len(self.names))
        z = ((rows - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def as_dict(self) -> dict:
        return {
            "features": list(self.names),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
        }

    @classmethod
    def from_dict(cls, obj: object, names: tuple[str, ...]) -> Platt:
        """Raises ValueError on anything but finite numbers of the right count for ``names``."""
        if not isinstance(obj, dict) or tuple(obj.get("features") or ()) != names:
            raise ValueError(f"expected features {names}")
        arrays = []
        for key in ("mean", "scale", "weights"):
            value = obj.get(key)
            if not isinstance(value, list) or len(value) != len(names):
                raise ValueError(f"{key}: expected {len(names)} numbers")
            arr = np.array(
                [float(v) for v in value if isinstance(v, int | float) and not isinstance(v, bool)]
            )
            if len(arr) != len(names) or not np.isfinite(arr).all():
                raise ValueError(f"{key}: not {len(names)} finite numbers")
            arrays.append(arr)
        bias = obj.get("bias")
        if not isinstance(bias, int | float) or isinstance(bias, bool) or not math.isfinite(bias):
            raise ValueError("bias: not a finite number")
        if (arrays[1] <= 0).any():
            raise ValueError("scale: must be positive")
        return cls(names, arrays[0], arrays[1], arrays[2], float(bias))


@dataclass(frozen=True)
class Relevance:
    """The fitted models: ``sparse`` always, ``dense`` when the asset was fitted with the encoder."""

    sparse: Platt
    dense: Platt | None
    trained_on: str = ""

    def probability(self, rows: list[list[float]], dense: bool) -> np.ndarray:
        """P(relevant) per hit; ``dense``: the rows hold a cosine (the encoder ran) — without a dense model
        the cosine is dropped and the sparse model used."""
        if not rows:
            return np.zeros(0)
        if dense and self.dense is not None:
            return self.dense.probability(np.array(rows))
        return self.sparse.probability(np.array([r[: len(SPARSE_FEATURES)] for r in rows]))

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "trained_on": self.trained_on,
                "sparse": self.sparse.as_dict(),
                "dense": self.dense.as_dict() if self.dense else None,
            },
            ensure_ascii=False,
            indent=1,
        )


def load_relevance(path: Path) -> Relevance | None:
    """The asset at ``path``, or ``None`` (logged) when it is missing, too big or not a relevance model."""
    path = Path(path)
    try:
        if path.stat().st_size > _MAX_BYTES:
            raise ValueError(f"larger than {_MAX_BYTES} bytes")
        obj = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file")
        sparse = Platt.from_dict(obj.get("sparse"), SPARSE_FEATURES)
        dense = Platt.from_dict(obj["dense"], DENSE_FEATURES) if obj.get("dense") is not None else None
        trained_on = obj.get("trained_on")
        return Relevance(sparse, dense, trained_on if isinstance(trained_on, str) else "")
    except FileNotFoundError:
        log.info("no statute relevance model at %s (%s); hits carry no relevance", path, REBUILD_COMMAND)
    except (OSError, ValueError, TypeError, UnicodeDecodeError) as exc:
        log.warning("statute relevance model %s ignored (%s); rebuild: %s", path, exc, REBUILD_COMMAND)
    return None


def fit(rows: np.ndarray, labels: np.ndarray, names: tuple[str, ...]) -> Platt:
    """Logistic regression (scikit-learn, L2, C = 1) on standardised features."""
    from sklearn.linear_model import LogisticRegression

    rows = np.asarray(rows, dtype=np.float64)
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale <= 0] = 1.0
    model = LogisticRegression(C=1.0, max_iter=1000).fit((rows - mean) / scale, np.asarray(labels, dtype=int))
    return Platt(names, mean, scale, model.coef_[0].astype(np.float64), float(model.intercept_[0]))
