"""The receptionist: routes a client's question to one of the consultation domains (LawLuo paper §3.2).

    r = Receptionist.load(settings)                  # assets/receptionist/, over the settings' domain table
    routing = r.classify("公司拖欠我三个月工资，还不签劳动合同，怎么办？")
    routing.domain, routing.name, routing.confidence  # "labor", "劳动纠纷", 0.8…
    routing.top                                      # the 3 best (id, name, probability)
    r.reroute(["另外我开车把人撞伤了，交警认定我全责"], current="labor")   # a Routing, or None: stay

The model is linear over two kinds of features of the prepared question (:func:`prepare`): TF-IDF of
character 1–3-grams (sublinear tf, l2-normalised, as scikit-learn's ``TfidfVectorizer``), and per
domain the summed weight of its keywords found in the question (scaled); decision values
``x·W + b`` become probabilities by a softmax with a temperature fitted on held-out questions
(temperature scaling, Guo et al. 2017). The asset is plain data — ``model.json`` (settings, domain
order, keywords), ``vocab.json`` (the n-gram of each column), ``idf.npy``, ``weights.npy``,
``bias.npy`` — rebuilt here without scikit-learn or torch (no pickles: nothing depends on the
scikit-learn version that trained it).
How it is trained, on which weak labels, and how accurate it is: ``training/train_receptionist.py``,
``assets/receptionist/PROVENANCE.md`` and ``benchmarks/receptionist_accuracy.py``.

**The laws of the retrieved statutes vote** (issue 20, item 5). With the firm's statute searcher
(:meth:`Receptionist.with_searcher`, or ``load(settings, searcher=…)``) the question is also searched
(``searcher.search(question, k)``) and each retrieved article says which domains its law belongs to:
:class:`LawDomains`, P(domain | article) learned from weak-labelled training questions and the
articles the same searcher retrieved for them, backed off article → chapter → law → prior
(``law_domains.json`` in the asset). The two are pooled log-linearly (a product of experts):
``softmax((decision / T + w · log mean_hits P(domain | hit)) / T2)``, ``k``, ``w`` and ``T2`` chosen on
the out-of-fold decisions of the training dev questions. Without a searcher, or without the file,
routing is exactly the linear model's. The other direction, the laws most associated with a domain:
:meth:`Receptionist.domain_laws` (:meth:`LawDomains.top_laws`).

**The labelled everyday questions vote too** (issue 39, session 39). With a :class:`~lawluo.agents.domain_vote.DomainVote`
(:meth:`Receptionist.with_domain_vote`, or ``load(settings, searcher=…)`` when the searcher has the e5 stage with its
adapter and ``lay_domains.npz`` is beside its vectors) the 5 learned-from lay questions nearest the question vote for
their domains, and the probabilities become ``(1 − w) · p + w · vote`` (``w``: the setting ``lay_domain_vote``,
0.3) before the fallback and re-routing rules read them. On everyday questions the receptionist alone is right for
0.665 (fresh5–10); what fresh11 said of the mix: ``benchmarks/routing_lay_vote.py``.

**Encoder upgrade.** :class:`EncoderReceptionist` has the same interface but embeds the prepared
question with a sentence-transformers encoder fine-tuned contrastively on same-domain/different-domain
question pairs (LawLuo §3.2, eq. 3) and routes with a linear (logistic-regression) head over the
embedding. ``training/train_receptionist_encoder.py`` writes its directory — ``model.json`` with
``"format": "encoder/1"``, ``head_weights.npy``, ``head_bias.npy`` and the encoder in ``encoder/``.
:meth:`Receptionist.from_dir` (and so :meth:`Receptionist.load`) returns one when the directory holds
that format; the shipped asset stays the linear model, which needs neither torch nor
sentence-transformers (imported only when an encoder directory is loaded).

**A domain the model does not know.** The domains come from the settings' table
(:mod:`lawluo.domains`), the model from training on the table of its day. A row added to the
table since is not refused: the receptionist routes among the domains it knows, gives the new one
probability 0, logs a warning and says so in :attr:`Receptionist.notice` (shown by the app's routing
panel and by ``python -m lawluo classify``) until it is retrained; the client can still choose the new
domain by hand. A model that routes to a domain the table lacks is refused when it loads (it would send
clients to a lawyer that does not exist): put the row back or retrain.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..domains import OTHER, PACKAGED, Domains, load_domains
from .law_domains import LAW_DOMAINS_FORMAT, HitKey, LawDomains, hit_keys  # noqa: F401  (re-exported)

logger = logging.getLogger(__name__)

ASSET_DIR = "receptionist"  # under settings.assets_dir
FORMAT = 1
ENCODER_FORMAT = "encoder/1"
REBUILD = "python -m training.train_receptionist --output_dir {path}"
REBUILD_ENCODER = "python -m training.train_receptionist_encoder --output_dir {path}"
LAW_DOMAINS_FILE = "law_domains.json"  # the law vote's map, beside the linear model (optional)

#: Longer questions are cut to their first MAX_CHARS characters (after :func:`prepare`): the domain
#: shows in the opening of a question, and the cost of classifying grows with the length.
MAX_CHARS = 2000

#: Below this confidence the routing falls back to 其他 (the general lawyer), keeping the scores.
#: Chosen on the nested cross-validation of benchmarks/receptionist_accuracy.py (out-of-fold routings
#: of the 250 LawBench dev questions): the 12 % of questions below 0.15 had the right best domain only
#: 24 % of the time (59 % above it), and sending them to 其他 cost 0.4 points of accuracy (0.548 →
#: 0.544); 0.25 would send 24 % there at a cost of 5 points. An unsure receptionist hands the client
#: to the generalist rather than to a specialist that is probably the wrong one.
FALLBACK_THRESHOLD = 0.15

#: Re-routing later in a conversation (the paper's stated future work): the client's last REROUTE_TURNS
#: turns joined, then the last turn alone, are classified; the receptionist switches on the first of
#: these routings that is not a fallback, names another domain with confidence ≥
#: REROUTE_MIN_CONFIDENCE and beats the current domain's probability by ≥ REROUTE_MARGIN. A vague
#: follow-up (“那我该怎么办？”) carries no domain words, so its routing is unsure and nothing changes;
#: a turn about a new matter (“另外我开车撞了人…”) moves the client even right after the first question.
#: Out of fold, routings with confidence ≥ 0.6 were right 74 % of the time (benchmark table); on the
#: 476 lawyer-llama multi-turn dialogues, which stay on one matter, the rule switched on 3.4 % of the
#: later turns (mostly real side questions, e.g. 公租房 inside a divorce consultation).
REROUTE_TURNS = 2
REROUTE_MIN_CONFIDENCE = 0.6
REROUTE_MARGIN = 0.3

_SPACES = re.compile(r"\s+")


class ReceptionistAssetError(FileNotFoundError):
    """The receptionist's asset is missing or unreadable; the message says how to rebuild it."""


class ReceptionistDomainsError(ReceptionistAssetError):
    """The model routes to a domain the domain table lacks; the message names it and what to do."""


def prepare(text: str) -> str:
    """The form of a question that the model sees: NFKC, lower case, one space for any run of
    whitespace, cut to :data:`MAX_CHARS`. Training applies the same function.

    >>> prepare("  公司 拖欠\\n\\n工资？ ABC ")
    '公司 拖欠 工资? abc'
    """
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()[:MAX_CHARS]


def keyword_votes(text: str, keywords: Sequence[tuple[str, int, float]], n_domains: int) -> np.ndarray:
    """Per domain, the summed weight of its distinct keywords found in ``text`` (a prepared question).

    ``keywords`` are (word, domain index, weight).

    >>> keyword_votes("离婚后孩子抚养费", [("离婚", 0, 1.0), ("抚养费", 0, 1.0), ("工资", 1, 1.0)], 2)
    array([2., 0.], dtype=float32)
    """
    votes = np.zeros(n_domains, dtype=np.float32)
    for word, index, weight in keywords:
        if word in text:
            votes[index] += weight
    return votes


def char_ngrams(text: str, lo: int, hi: int) -> list[str]:
    """The character n-grams of ``text`` for n in [lo, hi], in scikit-learn's order.

    >>> char_ngrams("工资单", 1, 2)
    ['工', '资', '单', '工资', '资单']
    """
    return [text[i : i + n] for n in range(lo, hi + 1) for i in range(len(text) - n + 1)]


def check_question(question: object) -> str:
    """The prepared question; ValueError when there is nothing to classify."""
    if not isinstance(question, str):
        raise ValueError(f"the question must be text, not {type(question).__name__}")
    text = prepare(question)
    if not text:
        raise ValueError("the question is empty: write the client's question (at least one character)")
    return text


@dataclass(frozen=True)
class Routing:
    """Where a question goes.

    ``domain``/``name``: the chosen domain (其他 when ``fallback``); ``confidence``: the probability of
    the best domain (also when it fell back); ``scores``: probability of each domain of the table, in
    its order (sum 1; 0 for a domain the model does not know); ``top``: the three best as (id, name,
    probability); ``fallback``: the best domain was below :data:`FALLBACK_THRESHOLD`, so the question
    went to 其他.
    """

    domain: str
    name: str
    confidence: float
    scores: dict[str, float] = field(repr=False)
    top: tuple[tuple[str, str, float], ...]
    fallback: bool = False
    laws: tuple[str, ...] = ()  # the laws of the retrieved articles that voted, best hit first; () without

    def as_dict(self) -> dict:
        out = {
            "domain": self.domain,
            "name": self.name,
            "confidence": round(self.confidence, 4),
            "fallback": self.fallback,
            "top": [{"domain": d, "name": n, "p": round(p, 4)} for d, n, p in self.top],
            "scores": {d: round(p, 4) for d, p in self.scores.items()},
        }
        if self.laws:
            out["laws"] = list(self.laws)
        return out


class Receptionist:
    """A linear domain classifier rebuilt from its asset (see the module docstring).

    ``table`` is the domain table it routes over (default: the packaged one); ``unknown`` lists the
    table's domains the model was not trained on (see the module docstring).
    """

    rebuild = REBUILD  # the command that trains this kind of model, with {path}
    source: Path | None = None  # the asset directory it was loaded from
    searcher = None  # a StatuteSearcher (its ``search(question, k)``): set by with_searcher
    domain_vote = None  # a DomainVote (the lay questions' domains, mixed in): set by with_domain_vote
    _law_domains: LawDomains | None = None
    _law_domains_file: Path | None = None  # read on first use: the 0.2 s load without a searcher stays

    @property
    def law_domains(self) -> LawDomains | None:
        """The law vote's map (``law_domains.json``), or None when the model was trained without one."""
        if self._law_domains is None and self._law_domains_file is not None:
            path = self._law_domains_file
            try:
                self.law_domains = LawDomains.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                raise ReceptionistAssetError(
                    f"law-domain map {path} is unreadable ({exc}); rebuild it with "
                    f"`{self.rebuild.format(path=path.parent)}`"
                ) from exc
        return self._law_domains

    @law_domains.setter
    def law_domains(self, law_domains: LawDomains | None) -> None:
        if law_domains is not None and law_domains.domains != self.domains:
            raise ValueError("the law-domain map's domains differ from the model's (retrain both together)")
        self._law_domains, self._law_domains_file = law_domains, None

    def __init__(
        self,
        *,
        domains: Sequence[str],
        vocab: Sequence[str],
        idf: np.ndarray,
        weights: np.ndarray,
        bias: np.ndarray,
        keywords: Sequence[tuple[str, str, float]],
        keyword_scale: float,
        temperature: float,
        ngram_range: tuple[int, int] = (1, 3),
        meta: dict | None = None,
        table: Domains = PACKAGED,
        law_domains: LawDomains | None = None,
    ):
        self._set_domains(domains, table)
        n, v = len(domains), len(vocab)
        if idf.shape != (v,) or weights.shape != (v + n, n) or bias.shape != (n,):
            raise ValueError(
                f"inconsistent shapes: vocab {v}, idf {idf.shape}, weights {weights.shape}, bias {bias.shape}"
            )
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, not {temperature}")
        self._column = {g: i for i, g in enumerate(vocab)}
        self._idf = idf.astype(np.float32)
        self._weights = weights.astype(np.float32)
        self._bias = bias.astype(np.float32)
        index = {d: i for i, d in enumerate(self.domains)}
        self._keywords = tuple((prepare(w), index[d], float(x)) for w, d, x in keywords)
        self._keyword_scale = float(keyword_scale)
        self._temperature = float(temperature)
        self._ngrams = tuple(ngram_range)
        self.meta = dict(meta or {})
        self.law_domains = law_domains

    def with_searcher(self, searcher) -> Receptionist:
        """A copy that also lets the laws of ``searcher.search(question, k)`` vote (module docstring);
        ``None`` gives back the linear model alone. The original is unchanged (it may be shared)."""
        other = copy.copy(self)
        other.searcher = searcher
        if searcher is not None:
            _ = other.uses_laws  # reads the map now when it is used (ReceptionistAssetError when unreadable)
        return other

    def with_domain_vote(self, vote) -> Receptionist:
        """A copy whose probabilities are mixed with ``vote`` (a :class:`~lawluo.agents.domain_vote.DomainVote`:
        ``vote(question)`` gives domain shares, ``vote.weight`` their weight); ``None`` takes it away. The original
        is unchanged (it may be shared)."""
        other = copy.copy(self)
        other.domain_vote = vote
        return other

    @property
    def uses_laws(self) -> bool:
        """Whether classify searches statutes and lets their laws vote (a searcher and a map with weight > 0)."""
        if self.searcher is None:
            return False
        trained = self.meta.get("law_vote") if isinstance(self.meta, dict) else None
        if self._law_domains is None and isinstance(trained, dict) and trained.get("weight") == 0:
            return False  # trained to weight 0 (model.json): the map need not even be read
        return self.law_domains is not None and self.law_domains.weight > 0

    def domain_laws(self, domain: str, n: int = 10) -> list[tuple[str, float]]:
        """The ``n`` laws most associated with ``domain`` (law key, P(domain | law)); see
        :meth:`LawDomains.top_laws`. ValueError when this model was trained without the map."""
        if self.law_domains is None:
            raise ValueError(
                "接待模型没有法律-领域表 this receptionist has no law-domain map (law_domains.json); retrain it with "
                f"`{self.rebuild.format(path=self.source or Path('assets') / ASSET_DIR)}`"
            )
        try:
            domain = self.table[domain].id
        except KeyError:
            raise ValueError(
                f"未知领域 unknown domain {domain!r}; domains: {', '.join(self.table.ids)}"
            ) from None
        return self.law_domains.top_laws(domain, n)

    def _set_domains(self, domains: Sequence[str], table: Domains) -> None:
        """The model's domains (its order) against the table's; refuses a domain the table lacks."""
        if len(set(domains)) != len(domains) or OTHER not in domains:
            raise ValueError(f"the model's domains {list(domains)} must be distinct and include {OTHER!r}")
        lacking = [d for d in domains if d not in table.ids]
        if lacking:
            raise ReceptionistDomainsError(
                f"the model routes to domain(s) {', '.join(lacking)}, which the domain table {table.source} "
                "lacks: put the row(s) back, or retrain the receptionist on this table"
            )
        self.domains = tuple(domains)
        self.table = table
        self.unknown = tuple(d for d in table.ids if d not in self.domains)
        index = {d: i for i, d in enumerate(self.domains)}
        # Report scores in the order of the table, whatever order the model was trained in.
        self._order = np.array([index[d] for d in table.ids if d in index])
        self._known = np.array([i for i, d in enumerate(table.ids) if d in index])

    @property
    def notice(self) -> str:
        """A plain sentence when the table has domains the trained model does not know, else ``""``."""
        if not self.unknown:
            return ""
        names = ", ".join(f"{d} ({self.table[d].name})" for d in self.unknown)
        plural, it = ("s", "them") if len(self.unknown) > 1 else ("", "it")
        path = self.source or Path("assets") / ASSET_DIR
        return (
            f"the trained receptionist does not know domain{plural} {names}: it routes among the other "
            f"{len(self.domains)} of the {len(self.table)} domains of {self.table.source} and never to {it} "
            f"(a client can still choose {it} by hand); retrain it with `{self.rebuild.format(path=path)}`"
        )

    # -- loading -----------------------------------------------------------------------------

    @classmethod
    def from_dir(cls, path: str | Path, table: Domains = PACKAGED, searcher=None) -> Receptionist:
        """Load the asset directory written by ``training/train_receptionist.py``, or an
        :class:`EncoderReceptionist` when ``model.json`` says ``"format": "encoder/1"``; it routes over
        ``table`` (default: the packaged domains), with the law vote when ``searcher`` is given and the
        directory holds ``law_domains.json``."""
        path = Path(path)
        if _asset_format(path) == ENCODER_FORMAT:
            return EncoderReceptionist.from_dir(path, table).with_searcher(searcher)
        files = ["model.json", "vocab.json", "idf.npy", "weights.npy", "bias.npy"]
        missing = [f for f in files if not (path / f).exists()]
        if missing:
            raise ReceptionistAssetError(
                f"receptionist model not found in {path} (missing {', '.join(missing)}); "
                f"build it with `{REBUILD.format(path=path)}`"
            )
        try:
            meta = json.loads((path / "model.json").read_text(encoding="utf-8"))
            if meta.get("format") != FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, this code reads format {FORMAT}")
            vocab = json.loads((path / "vocab.json").read_text(encoding="utf-8"))
            arrays = {k: np.load(path / f"{k}.npy", allow_pickle=False) for k in ("idf", "weights", "bias")}
            model = cls(
                domains=meta["domains"],
                vocab=vocab,
                keywords=[tuple(k) for k in meta["keywords"]],
                keyword_scale=meta["keyword_scale"],
                temperature=meta["temperature"],
                ngram_range=tuple(meta["ngram_range"]),
                meta=meta,
                table=table,
                **arrays,
            )
            model.source = path
            if (path / LAW_DOMAINS_FILE).exists():
                model._law_domains_file = path / LAW_DOMAINS_FILE
            model.searcher = searcher
            if searcher is not None:
                _ = model.uses_laws  # reads a used map now: refused at load, not at the first question
            return model
        except ReceptionistAssetError:
            raise
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise ReceptionistAssetError(
                f"receptionist model in {path} is unreadable ({exc}); rebuild it with `{REBUILD.format(path=path)}`"
            ) from exc

    @classmethod
    def load(cls, settings, table: Domains | None = None, searcher=None, dense=None) -> Receptionist:
        """The shipped model, ``<settings.assets_dir>/receptionist``, over ``table`` (default: the table
        of ``settings.domains_file``), with the law vote when ``searcher`` (the firm's statute searcher)
        is given, and the lay questions' domain vote over ``dense`` (default: the searcher's dense stage) when it
        has one (module docstring); logs :attr:`notice` when the table has domains it does not know."""
        from .domain_vote import DomainVote

        table = table or load_domains(settings.domains_file)
        model = cls.from_dir(Path(settings.assets_dir) / ASSET_DIR, table, searcher=searcher)
        if model.notice:
            logger.warning("%s", model.notice)
        vote = DomainVote.from_settings(
            settings, dense if dense is not None else getattr(searcher, "dense", None)
        )
        return model if vote is None else model.with_domain_vote(vote)

    # -- classifying -------------------------------------------------------------------------

    def decision(self, text: str) -> np.ndarray:
        """Decision values of a prepared question, one per domain in the model's order."""
        counts: dict[int, int] = {}
        column = self._column
        for gram in char_ngrams(text, *self._ngrams):
            j = column.get(gram)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        out = self._bias.copy()
        if counts:
            cols = np.fromiter(counts, dtype=np.int64, count=len(counts))
            tf = 1.0 + np.log(np.fromiter(counts.values(), dtype=np.float32, count=len(counts)))
            x = tf * self._idf[cols]
            norm = float(np.sqrt(x @ x))
            out += (x / norm) @ self._weights[cols]
        n = len(self.domains)
        votes = keyword_votes(text, self._keywords, n) * self._keyword_scale
        out += votes @ self._weights[len(self._column) :]
        return out

    def probabilities(self, question: str) -> dict[str, float]:
        """Probability of each domain (in the table's order; they sum to 1)."""
        probs = self._probs_laws(check_question(question), question)[0]
        return dict(zip(self.table.ids, probs.tolist(), strict=True))

    def _probs_laws(self, text: str, question: str) -> tuple[np.ndarray, tuple[str, ...]]:
        """Probabilities in the table's order (0 for a domain the model does not know) and the laws that voted
        (``()`` without the law vote). ``text`` is the prepared ``question``; the domain vote reads the question
        as written, as the statute search does (its vector is cached there)."""
        z = self.decision(text) / self._temperature
        keys = self._retrieved(text) if self.uses_laws else []
        if keys:
            z = (z + self.law_domains.weight * self.law_domains.vote(keys)) / self.law_domains.temperature
        z = z[self._order]
        z = np.exp(z - z.max())
        probs = np.zeros(len(self.table), dtype=z.dtype)
        probs[self._known] = z / z.sum()
        if self.domain_vote is not None:
            probs = self.domain_vote.mix(probs, self.table.ids, self.domains, question[:MAX_CHARS])
        return probs, tuple(dict.fromkeys(law for law, _, _ in keys))

    def _retrieved(self, text: str) -> list[HitKey]:
        """The searcher's top ``k`` for ``text``; [] (routing by the linear model alone) when it fails."""
        try:
            return hit_keys(self.searcher.search(text, self.law_domains.k))
        except Exception as exc:  # a search fault must not stop the routing; it is logged
            logger.warning(
                "statute search for the receptionist failed (%s); routing without the law vote", exc
            )
            return []

    def classify(self, question: str) -> Routing:
        """Route one question. ValueError for an empty question; long ones are cut to MAX_CHARS."""
        probs, laws = self._probs_laws(check_question(question), question)
        return self._routing(probs, laws)

    def _routing(self, probs: np.ndarray, laws: tuple[str, ...] = ()) -> Routing:
        scores = {d: float(p) for d, p in zip(self.table.ids, probs, strict=True)}
        best = sorted(scores, key=scores.get, reverse=True)
        top = tuple((d, self.table[d].name, scores[d]) for d in best[:3])
        confidence = scores[best[0]]
        fallback = confidence < FALLBACK_THRESHOLD and best[0] != OTHER
        chosen = OTHER if fallback else best[0]
        return Routing(chosen, self.table[chosen].name, confidence, scores, top, fallback, laws)

    def reroute(self, turns: Sequence[str], current: str) -> Routing | None:
        """A new routing when the client's recent turns clearly belong to another domain, else None.

        ``turns`` are the client's turns so far, oldest first; the last :data:`REROUTE_TURNS` are
        joined, then the last one alone, are classified, and the rule of the constants above decides.
        """
        current = self.table[current].id
        recent = [t for t in turns if isinstance(t, str) and t.strip()][-REROUTE_TURNS:]
        if not recent:
            raise ValueError("no client turns to re-route on: give at least one non-empty turn")
        windows = ["\n".join(recent[i:]) for i in range(len(recent))]
        for text in windows:
            routing = self.classify(text)
            if (
                not routing.fallback
                and routing.domain != current
                and routing.confidence >= REROUTE_MIN_CONFIDENCE
                and routing.confidence - routing.scores[current] >= REROUTE_MARGIN
            ):
                return routing
        return None


def _asset_format(path: Path) -> object:
    """The ``format`` of ``path/model.json``, or None when it is missing or unreadable (the loader says why)."""
    try:
        return json.loads((path / "model.json").read_text(encoding="utf-8")).get("format")
    except (OSError, ValueError, AttributeError):
        return None


class EncoderReceptionist(Receptionist):
    """The receptionist's encoder upgrade (LawLuo §3.2, eq. 3): a sentence-transformers encoder,
    fine-tuned with a contrastive loss so that questions of one domain lie close together, and a
    linear head over the normalised embedding: probabilities = softmax((e·W + b) / temperature).

    Same interface as :class:`Receptionist` (``classify``, ``probabilities``, ``reroute``, ``from_dir``,
    ``load``): only :meth:`decision` differs. Questions go through :func:`prepare` as for the linear model.
    """

    rebuild = REBUILD_ENCODER

    def __init__(
        self,
        *,
        encoder,
        domains: Sequence[str],
        weights: np.ndarray,
        bias: np.ndarray,
        temperature: float = 1.0,
        meta: dict | None = None,
        table: Domains = PACKAGED,
    ):
        # Not Receptionist.__init__: no n-gram vocabulary here. What the inherited methods read is set.
        self._set_domains(domains, table)
        n = len(domains)
        if weights.ndim != 2 or weights.shape[1] != n or bias.shape != (n,):
            raise ValueError(f"inconsistent head: weights {weights.shape}, bias {bias.shape}, {n} domains")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, not {temperature}")
        self.encoder = encoder
        self._weights = weights.astype(np.float32)
        self._bias = bias.astype(np.float32)
        self._temperature = float(temperature)
        self.meta = dict(meta or {})

    @classmethod
    def from_dir(cls, path: str | Path, table: Domains = PACKAGED) -> EncoderReceptionist:
        """Load a directory written by ``training/train_receptionist_encoder.py`` (imports
        sentence-transformers and torch); it routes over ``table``."""
        path = Path(path)
        rebuild = REBUILD_ENCODER.format(path=path)
        files = ["model.json", "head_weights.npy", "head_bias.npy", "encoder"]
        missing = [f for f in files if not (path / f).exists()]
        if missing:
            raise ReceptionistAssetError(
                f"receptionist encoder not found in {path} (missing {', '.join(missing)}); build it with `{rebuild}`"
            )
        try:
            meta = json.loads((path / "model.json").read_text(encoding="utf-8"))
            if meta.get("format") != ENCODER_FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, this code reads format {ENCODER_FORMAT}")
            weights = np.load(path / "head_weights.npy", allow_pickle=False)
            bias = np.load(path / "head_bias.npy", allow_pickle=False)
            from sentence_transformers import SentenceTransformer

            encoder = SentenceTransformer(str(path / "encoder"), device=meta.get("device"))
            if encoder.get_embedding_dimension() != weights.shape[0]:
                raise ValueError(
                    f"the encoder gives {encoder.get_embedding_dimension()}-dimensional embeddings, "
                    f"the head reads {weights.shape[0]}"
                )
            model = cls(
                encoder=encoder,
                domains=meta["domains"],
                weights=weights,
                bias=bias,
                temperature=meta.get("temperature", 1.0),
                meta=meta,
                table=table,
            )
            model.source = path
            return model
        except ImportError as exc:
            raise ReceptionistAssetError(
                f"the receptionist in {path} is an encoder and needs sentence-transformers ({exc}); "
                "pip install sentence-transformers, or use the linear receptionist"
            ) from exc
        except ReceptionistDomainsError:
            raise
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise ReceptionistAssetError(
                f"receptionist encoder in {path} is unreadable ({exc}); rebuild it with `{rebuild}`"
            ) from exc

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised embeddings of prepared questions, one row each (as the head was trained on)."""
        return np.asarray(
            self.encoder.encode(
                list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            ),
            dtype=np.float32,
        )

    def decision(self, text: str) -> np.ndarray:
        """The head's logits for a prepared question, one per domain in the model's order."""
        return self.embed([text])[0] @ self._weights + self._bias
