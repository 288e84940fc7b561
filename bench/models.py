"""Figures for the offline default models: load time, generation speed, embedding speed.

Run from the repository root: ``.venv/bin/python -m bench.models [--threads N] [--runs N]``.
Load times are measured in fresh interpreters, imports included (a process loads each model
once); every figure is the median of several runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from shared.adapters.local_embedder import LocalEmbedder
from shared.adapters.local_llm import LocalLLM
from shared.config import Settings
from shared.ports import ChatTurn, LLMRequest

ROOT = Path(__file__).resolve().parent.parent


class Fact(BaseModel):
    subject: str
    text: str


class Extraction(BaseModel):
    facts: list[Fact] = Field(max_length=4)


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


_COLD_LOAD = {
    "llm": "from shared.adapters.local_llm import LocalLLM; LocalLLM(threads={threads}).load()",
    "embedder": "from shared.adapters.local_embedder import LocalEmbedder; LocalEmbedder().load()",
}


def cold_load(which: str, threads: int, runs: int) -> float:
    """Seconds from a fresh interpreter to a loaded model, imports included."""
    code = (
        "import time; started = time.perf_counter(); "
        + _COLD_LOAD[which].format(threads=threads)
        + "; print(time.perf_counter() - started)"
    )
    seconds = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        )
        seconds.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(seconds)


def bench_llm(threads: int, runs: int) -> None:
    llm = LocalLLM(threads=threads)
    llm.load()
    prompt = LLMRequest(
        system="You are a helpful assistant.",
        messages=[ChatTurn(role="user", text="Write a short story about a lighthouse keeper.")],
        max_output_tokens=128,
        temperature=0.7,
    )
    engine_speed, wall_speed = [], []
    for _ in range(runs):
        started = time.perf_counter()
        generation = llm.generate(prompt)
        wall_speed.append(generation.usage.output_tokens / (time.perf_counter() - started))
        engine_speed.append(llm.last_tokens_per_second or 0.0)
    extraction = LLMRequest(
        system="Extract facts about the user.",
        messages=[ChatTurn(role="user", text="I'm Anna, I live in Zurich and my dog is Rex.")],
        max_output_tokens=256,
        temperature=0.0,
    )
    structured = [timed(lambda: llm.structured(extraction, Extraction)) for _ in range(runs)]
    print(f"local LLM generation    {statistics.median(engine_speed):7.1f} tokens/s (decode)")
    print(f"                        {statistics.median(wall_speed):7.1f} tokens/s (wall, 128 max)")
    print(f"local LLM structured    {statistics.median(structured) * 1000:7.0f} ms per call")


def bench_embedder(runs: int) -> None:
    embedder = LocalEmbedder()
    embedder.load()
    texts = [
        f"Note {i}: my colleague number {i % 13} prefers meetings on day {i % 5} of the week."
        for i in range(64)
    ]
    per_batch = [timed(lambda: embedder.embed(texts)) for _ in range(runs)]
    single = [timed(lambda: embedder.embed(["What does Anna like?"])) for _ in range(runs)]
    print(f"local embedder          {len(texts) / statistics.median(per_batch):7.1f} texts/s (64)")
    print(f"                        {statistics.median(single) * 1000:7.1f} ms for one query")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=Settings().local_threads)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"threads={args.threads} runs={args.runs} (medians)")
    llm_load = cold_load("llm", args.threads, 3)
    embedder_load = cold_load("embedder", args.threads, 3)
    print(f"local LLM load          {llm_load:7.2f} s (fresh process, imports included)")
    print(f"local embedder load     {embedder_load:7.2f} s (fresh process, imports included)")
    bench_llm(args.threads, args.runs)
    bench_embedder(args.runs)


if __name__ == "__main__":
    main()
