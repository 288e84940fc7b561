"""Figures for the local model service: start time, generation speed, structured calls, the
quality of structured output and short replies, embedding speed, and four structured calls
sent at once (queued, or decoded together with ``--parallel``).

    .venv/bin/python -m bench.models [--runs N] [--gguf FILE --model-name NAME] [--threads N]
        [--parallel N]

Each run starts a fresh service (``scripts/model_service``) on a free port and calls it
through the production ``vertex`` adapters, exactly as the functions do under ``make dev``.
``--gguf`` measures another GGUF text model in the same way, to compare candidates. Every
speed figure is the median of ``--runs`` calls.
"""

from __future__ import annotations

import argparse
import re
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench.model_probes import (
    EXTRACT_SYSTEM,
    EXTRACTION,
    REPLIES,
    REPLY_SYSTEM,
    Mentions,
    extraction_score,
)
from scripts.model_service.child import Child, child_service
from scripts.model_service.llama import MODEL_NAME
from shared.adapters.vertex_llm import build_vertex
from shared.config import Settings
from shared.errors import ModelOutputInvalid
from shared.ports import LLM, ChatTurn, Embedder, LLMRequest


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def ask(text: str, system: str = "", max_tokens: int = 128, temperature: float = 0.0) -> LLMRequest:
    return LLMRequest(
        system=system,
        messages=[ChatTurn(role="user", text=text)],
        max_output_tokens=max_tokens,
        temperature=temperature,
    )


def bench_speed(llm: LLM, runs: int) -> None:
    story = ask("Write a short story about a lighthouse keeper.", "Be helpful.", 128, 0.7)
    speeds, structured = [], []
    for _ in range(runs):
        started = time.perf_counter()
        generation = llm.generate(story)
        speeds.append(generation.usage.output_tokens / (time.perf_counter() - started))
    message = next(iter(EXTRACTION))
    for _ in range(runs):
        structured.append(timed(lambda: _structured(llm, message)))
    print(f"generation              {statistics.median(speeds):7.1f} tokens/s (wall, 128 max)")
    print(f"structured call         {statistics.median(structured) * 1000:7.0f} ms (one person)")


def bench_at_once(llm: LLM, runs: int, at_once: int = 4) -> None:
    """``at_once`` structured calls sent together: queued with one slot, decoded together
    with ``--parallel``. The first round is apart: slots that have never seen the prompt."""
    messages = list(EXTRACTION)[:at_once]

    def together() -> float:
        threads = [threading.Thread(target=_structured, args=(llm, m)) for m in messages]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - started

    first = together()
    rounds = [together() for _ in range(runs)]
    alone = statistics.median(timed(lambda: _structured(llm, messages[0])) for _ in range(runs))
    print(
        f"{at_once} structured at once     {statistics.median(rounds):7.2f} s wall "
        f"({first:.2f} s the first time; one alone {alone:.2f} s)"
    )


def _structured(llm: LLM, message: str) -> Mentions | None:
    """The people of ``message``, or None when the output broke the schema (e.g. cut off)."""
    try:
        return llm.structured(ask(message, EXTRACT_SYSTEM, 200), Mentions)[0]
    except ModelOutputInvalid:
        return None


def bench_quality(llm: LLM) -> None:
    valid = expected = named = exact = 0
    for message in EXTRACTION:
        found = _structured(llm, message)
        if found is None:
            expected += len(EXTRACTION[message])
            continue
        valid += 1
        counts = extraction_score(message, found)
        expected, named, exact = expected + counts[0], named + counts[1], exact + counts[2]
    right, words, seconds = 0, [], []
    for question, answer in REPLIES.items():
        started = time.perf_counter()
        text = llm.generate(ask(question, REPLY_SYSTEM, 60)).text
        seconds.append(time.perf_counter() - started)
        right += bool(re.search(answer, text.lower()))
        words.append(len(text.split()))
    print(f"structured, schema-valid {valid:>3}/{len(EXTRACTION)} messages")
    print(f"  people named          {named:>3}/{expected}; name, relation and city right {exact}")
    print(f"short replies right     {right:>3}/{len(REPLIES)}", end="")
    print(f"  (median {statistics.median(words):.0f} words, {statistics.median(seconds):.2f} s)")


def bench_embedder(embedder: Embedder, runs: int) -> None:
    texts = [
        f"Note {i}: my colleague number {i % 13} prefers meetings on day {i % 5} of the week."
        for i in range(64)
    ]
    batch = [timed(lambda: embedder.embed(texts)) for _ in range(runs)]
    single = [timed(lambda: embedder.embed(["What does Anna like?"])) for _ in range(runs)]
    print(f"embeddings              {len(texts) / statistics.median(batch):7.1f} texts/s (64)")
    print(f"                        {statistics.median(single) * 1000:7.1f} ms for one query")


def start_seconds(options: list[str], model: str) -> float:
    started = time.perf_counter()
    with child_service(*options, model=model):
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--gguf", type=Path, help="another GGUF text model to measure")
    parser.add_argument("--model-name", default=MODEL_NAME)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=1, help="the service's slots")
    args = parser.parse_args()
    options = ["--threads", str(args.threads), "--parallel", str(args.parallel)]
    if args.gguf:
        options += ["--gguf", str(args.gguf)]
    print(
        f"{args.model_name}: threads={args.threads} parallel={args.parallel} "
        f"runs={args.runs} (medians)"
    )
    print(f"service start           {start_seconds(options, args.model_name):7.2f} s (to healthy)")
    with child_service(*options, model=args.model_name) as child:
        llm, embedder = models(child)
        bench_speed(llm, args.runs)
        bench_at_once(llm, args.runs)
        bench_quality(llm)
        bench_embedder(embedder, args.runs)


def models(child: Child) -> tuple[LLM, Embedder]:
    return build_vertex(Settings(env="dev", **child.settings()))


if __name__ == "__main__":
    main()
