"""Intent routing by nearest labelled examples: deterministic, and never forced.

The message is embedded with all-MiniLM-L6-v2 (through the ``Embedder`` port) and compared
with the examples of ``examples.py``, whose vectors are precomputed into the committed
``route_vectors.npz`` (by ``scripts/understanding_vectors.py``), so a cold start embeds
one message, not two hundred. A label's score is the mean similarity of its nearest
``NEIGHBOURS`` examples; the best label decides only when its score reaches ``MIN_SCORE``
and its margin over the runner-up reaches ``MIN_MARGIN``. Anything closer falls through to
the model's classification: never forced.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from shared.errors import ConfigurationError
from shared.ports import Embedder
from shared.understanding.examples import ELSEWHERE, EXAMPLES
from shared.understanding.result import LABELS, Label, RouteDecision

VECTORS_FILE = Path(__file__).with_name("route_vectors.npz")
MODEL = "all-MiniLM-L6-v2"
NEIGHBOURS = 2
MIN_SCORE = 0.40  # chosen on CLINC150 train and the labelled set: bench/understanding_tune.py
MIN_MARGIN = 0.03
ELSEWHERE_LABEL = "elsewhere"  # requests of domains we keep no records for (examples.py)

Matrix = npt.NDArray[np.float32]


def examples_digest() -> str:
    """What the vectors file must have been made from: the model and every example."""
    pairs = [list(pair) for pair in _all_examples()]
    raw = json.dumps([MODEL, pairs], ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


def write_vectors(embedder: Embedder, path: Path = VECTORS_FILE) -> None:
    """Embed the examples and store them (float16: the file stays small, the ranking same)."""
    if embedder.model_name != MODEL:
        raise ConfigurationError(f"route vectors are made with {MODEL}, not {embedder.model_name}")
    pairs = _all_examples()
    vectors = np.asarray(embedder.embed([text for _, text in pairs]), dtype=np.float16)
    labels = np.asarray([label for label, _ in pairs])
    with path.open("wb") as out:
        np.savez_compressed(
            out, vectors=vectors, labels=labels, digest=np.asarray(examples_digest())
        )


def _all_examples() -> tuple[tuple[str, str], ...]:
    return EXAMPLES + tuple((ELSEWHERE_LABEL, text) for text in ELSEWHERE)


def stored_digest(path: Path = VECTORS_FILE) -> str:
    with np.load(path, allow_pickle=False) as data:
        return str(data["digest"])


@dataclass(frozen=True)
class _Table:
    vectors: Matrix  # one unit row per example
    label_rows: dict[Label, npt.NDArray[np.intp]]
    elsewhere_rows: npt.NDArray[np.intp]


class Router:
    def __init__(
        self,
        embedder: Embedder,
        path: Path = VECTORS_FILE,
        min_score: float = MIN_SCORE,
        min_margin: float = MIN_MARGIN,
    ) -> None:
        if embedder.model_name != MODEL:
            raise ConfigurationError(f"the router needs {MODEL}, got {embedder.model_name}")
        self.embedder = embedder
        self._path = path
        self.min_score = min_score
        self.min_margin = min_margin
        self._lock = threading.Lock()
        self._table: _Table | None = None

    def load(self) -> None:
        """Read the vectors now rather than on the first message (a warm-up)."""
        self._loaded()

    def route(self, text: str) -> RouteDecision:
        return self.decide(self.scores(self.embedder.embed([text])[0]))

    def scores(self, vector: Sequence[float]) -> dict[Label, float]:
        """Each label's score for a message's unit vector."""
        table = self._loaded()
        similarity = table.vectors @ np.asarray(vector, dtype=np.float32)
        return {
            label: float(np.sort(similarity[rows])[-NEIGHBOURS:].mean())
            for label, rows in table.label_rows.items()
        }

    def elsewhere(self, vector: Sequence[float]) -> float:
        """The score of the requests of domains we keep no records for (``ELSEWHERE``)."""
        table = self._loaded()
        similarity = table.vectors[table.elsewhere_rows] @ np.asarray(vector, dtype=np.float32)
        return float(np.sort(similarity)[-NEIGHBOURS:].mean())

    def decide(self, scores: dict[Label, float]) -> RouteDecision:
        ranked = sorted(scores, key=lambda label: scores[label], reverse=True)
        best, second = ranked[0], ranked[1]
        margin = scores[best] - scores[second]
        decision = RouteDecision(label=best, best=best, score=scores[best], margin=margin)
        if scores[best] < self.min_score:
            reason = f"nothing near: {best} at {scores[best]:.2f}"
        elif margin < self.min_margin:
            reason = f"{best} and {second} too close ({margin:.3f})"
        else:
            return decision
        return decision.model_copy(update={"label": None, "reason": reason})

    def _loaded(self) -> _Table:
        with self._lock:
            if self._table is None:
                self._table = _read(self._path)
            return self._table


def _read(path: Path) -> _Table:
    with np.load(path, allow_pickle=False) as data:
        if str(data["digest"]) != examples_digest():
            raise ConfigurationError(f"{path.name} is stale: run scripts/understanding_vectors.py")
        vectors = data["vectors"].astype(np.float32)
        labels = [str(label) for label in data["labels"]]
    rows = {
        label: np.asarray([i for i, name in enumerate(labels) if name == label], dtype=np.intp)
        for label in LABELS
    }
    elsewhere = np.asarray(
        [i for i, name in enumerate(labels) if name == ELSEWHERE_LABEL], dtype=np.intp
    )
    return _Table(vectors=vectors, label_rows=rows, elsewhere_rows=elsewhere)
