"""all-MiniLM-L6-v2's encoder as an ONNX graph run by onnxruntime, built in this process from
the safetensors weights (there is no ONNX file to ship, and the package of the weights
declares torch).

The graph is small and made at load (about 100 nodes); the weights never pass through
protobuf: each is declared as external data and handed to onnxruntime as an ``OrtValue``
(``add_external_initializers``), so loading costs one copy of them. onnxruntime runs the
encoder 2-2.5x faster than the numpy version did (fused kernels, prepacked weights), with
the same vectors (cosine 1.0000 on the frozen understanding set). The int8-quantised graph
was 7x faster again but drifted to cosine 0.84-0.95: too far for the router's thresholds.
One thread per session: on the shared 2-core machines two threads waited on each other.

onnxruntime's telemetry is turned off before it is imported (``ORT_DISABLE_TELEMETRY``): from
1.29 its Linux build starts an uploader thread at import that sends usage events to Microsoft
and keeps a device id and an event cache under ``~/.cache``. That thread does not survive a
fork, and the turn function loads MiniLM in gunicorn's master before the worker is forked: at
exit the worker's copy of the uploader joined a thread that was not there, so the worker
aborted (``std::system_error``) or hung until gunicorn killed it 30 s later
(``docs/deploy.md``, cold starts).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from safetensors.numpy import load_file

Array = npt.NDArray[np.float32]
_OPSET = 20  # Gelu and LayerNormalization are plain operators from here
_INLINE_BYTES = 128  # onnxruntime reads smaller tensors from the graph itself


@dataclass
class _Builder:
    weights: dict[str, Array]
    eps: float
    nodes: list[Any] = field(default_factory=list)
    inline: list[Any] = field(default_factory=list)
    external: dict[str, Array] = field(default_factory=dict)

    def tensor(self, name: str, value: npt.NDArray[Any]) -> str:
        from onnx import TensorProto, numpy_helper

        value = np.ascontiguousarray(value)
        if value.nbytes < _INLINE_BYTES:
            self.inline.append(numpy_helper.from_array(value, name))
            return name
        proto = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=value.shape)
        proto.data_location = TensorProto.EXTERNAL
        proto.external_data.add(key="location", value="in-memory")
        self.inline.append(proto)
        self.external[name] = value.astype(np.float32)
        return name

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        from onnx import helper

        out = f"v{len(self.nodes)}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def norm(self, x: str, prefix: str) -> str:
        w, b = self.weights[f"{prefix}.weight"], self.weights[f"{prefix}.bias"]
        scale, shift = self.tensor(f"{prefix}.w", w), self.tensor(f"{prefix}.b", b)
        return self.op("LayerNormalization", x, scale, shift, axis=-1, epsilon=self.eps)

    def dense(self, x: str, prefix: str) -> str:
        w, b = self.weights[f"{prefix}.weight"], self.weights[f"{prefix}.bias"]
        product = self.op("MatMul", x, self.tensor(f"{prefix}.wT", w.T))
        return self.op("Add", product, self.tensor(f"{prefix}.b", b))


def _graph(model_dir: Path) -> tuple[bytes, dict[str, Array]]:
    """The serialised graph (weights left out) and the weights it names."""
    from onnx import TensorProto, helper

    config = json.loads((model_dir / "config.json").read_text())
    heads, hidden = config["num_attention_heads"], config["hidden_size"]
    weights = load_file(model_dir / "model.safetensors")
    g = _Builder(weights={k: v.astype(np.float32) for k, v in weights.items()},
                 eps=config["layer_norm_eps"])  # fmt: skip
    w = g.weights
    x = g.op("Gather", g.tensor("word", w["embeddings.word_embeddings.weight"]), "input_ids")
    position = g.tensor("position", w["embeddings.position_embeddings.weight"])
    x = g.op("Add", x, g.op("Gather", position, "position_ids"))
    x = g.op("Add", x, g.tensor("token_type", w["embeddings.token_type_embeddings.weight"][0]))
    x = g.norm(x, "embeddings.LayerNorm")
    split = g.tensor("split", np.array([0, 0, heads, hidden // heads], dtype=np.int64))
    merge = g.tensor("merge", np.array([0, 0, hidden], dtype=np.int64))
    scale = g.tensor("scale", np.array(1 / np.sqrt(hidden // heads), dtype=np.float32))
    shapes = _Shapes(split=split, merge=merge, scale=scale)
    for i in range(config["num_hidden_layers"]):
        x = _layer(g, x, f"encoder.layer.{i}.", shapes)
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["length"]),
        helper.make_tensor_value_info("key_bias", TensorProto.FLOAT, ["batch", 1, 1, "length"]),
    ]
    output = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", hidden])
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", inputs, [output], g.inline)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 9
    return model.SerializeToString(), g.external


@dataclass(frozen=True)
class _Shapes:
    split: str  # hidden -> heads x head size
    merge: str  # and back
    scale: str  # 1 / sqrt(head size)


def _layer(g: _Builder, x: str, layer: str, shapes: _Shapes) -> str:
    attention = layer + "attention."

    def per_head(name: str, perm: list[int]) -> str:
        projected = g.op("Reshape", g.dense(x, attention + name), shapes.split)
        return g.op("Transpose", projected, perm=perm)

    q = per_head("self.query", [0, 2, 1, 3])
    k = per_head("self.key", [0, 2, 3, 1])
    v = per_head("self.value", [0, 2, 1, 3])
    scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), shapes.scale), "key_bias")
    probs = g.op("Softmax", scores, axis=-1)
    context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
    context = g.op("Reshape", context, shapes.merge)
    attended = g.op("Add", x, g.dense(context, attention + "output.dense"))
    x = g.norm(attended, attention + "output.LayerNorm")
    inner = g.op("Gelu", g.dense(x, layer + "intermediate.dense"))
    return g.norm(
        g.op("Add", x, g.dense(inner, layer + "output.dense")), layer + "output.LayerNorm"
    )


class BertGraph:
    """The encoder's last hidden states for a padded batch of token ids."""

    def __init__(self, model_dir: Path) -> None:
        os.environ["ORT_DISABLE_TELEMETRY"] = "1"  # read once, when onnxruntime loads
        import onnxruntime as ort

        graph, weights = _graph(model_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about the unused "in-memory" path: not ours
        values = [ort.OrtValue.ortvalue_from_numpy(weights[name]) for name in weights]
        options.add_external_initializers(list(weights), values)
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    def hidden(self, ids: npt.NDArray[np.int64], mask: Array) -> Array:
        # Padded keys get a large negative score so softmax ignores them.
        key_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :].astype(np.float32)
        positions = np.arange(ids.shape[1], dtype=np.int64)
        feed = {"input_ids": ids, "position_ids": positions, "key_bias": key_bias}
        hidden: Array = self._session.run(["hidden"], feed)[0]
        return hidden
