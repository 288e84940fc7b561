"""Run the local model service: ``python -m scripts.model_service --port N --token-file F``.

Loads the text model (SmolLM2 by default, or ``--gguf``) and MiniLM once, then serves until
SIGTERM. ``scripts/stack`` starts it with the profile's port and token.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from scripts.model_service.llama import MODEL_NAME, LlamaEngine, bundled_gguf_path
from scripts.model_service.server import build_server
from scripts.model_service.service import Limits, ModelService
from shared.adapters.local_embedder import LocalEmbedder

log = logging.getLogger("model_service")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    defaults = Limits()
    parser = argparse.ArgumentParser(prog="python -m scripts.model_service", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-file", type=Path, required=True, help="the static bearer token")
    parser.add_argument("--gguf", type=Path, help="another GGUF text model (default: SmolLM2)")
    parser.add_argument("--model-name", default=MODEL_NAME, help="the text model's name in URLs")
    # One: measured on 2 cores, llama.cpp's second thread adds little to a 135M model alone,
    # and as soon as anything else wants the cores, two threads fall to a tenth of the speed.
    parser.add_argument("--threads", type=int, default=1)
    # One: measured again on 2 cores (docs/local-stack.md, "Concurrency"), slots that hold their
    # prompt decode faster together, but a slot without it evaluates the whole prompt (3-9 s)
    # while every other slot waits, and whole turns at once got no better p95 than a queue.
    parser.add_argument(
        "--parallel", type=int, default=defaults.slots, help="generations decoded together"
    )
    parser.add_argument(
        "--background-slots",
        type=int,
        help="of --parallel, for background work (default: all but one)",
    )
    parser.add_argument(
        "--no-preempt",
        dest="preempt",
        action="store_false",
        help="a waiting reply never stops a running background generation",
    )
    parser.add_argument(
        "--slice-tokens",
        type=int,
        default=defaults.slice_tokens,
        help="a free-text reply that made this many tokens pauses for one next in line (0: never)",
    )
    parser.add_argument(
        "--aging-seconds",
        type=float,
        default=defaults.aging_seconds,
        help="a request waiting this long goes first, whatever its size or slices run",
    )
    parser.add_argument(
        "--max-items", type=int, default=8, help="most items of any array in structured output"
    )
    parser.add_argument(
        "--max-string-length", type=int, default=200, help="longest free string, in characters"
    )
    parser.add_argument("--n-ctx", type=int, default=4096, help="context of each generation")
    parser.add_argument("--prompt-cache-mib", type=int, default=64)
    parser.add_argument("--max-output-tokens", type=int, default=defaults.max_output_tokens)
    parser.add_argument(
        "--max-generation-seconds", type=float, default=defaults.max_generation_seconds
    )
    parser.add_argument("--max-queue-seconds", type=float, default=defaults.max_queue_seconds)
    parser.add_argument("--max-waiting", type=int, default=defaults.max_waiting)
    parser.add_argument(
        "--gemini-like",
        action="store_true",
        help="accept and ignore pattern/minLength/maxLength in responseJsonSchema, as Gemini",
    )
    args = parser.parse_args(argv)
    background = args.background_slots
    if args.parallel < 1 or (background is not None and not 1 <= background <= args.parallel):
        parser.error("--parallel must be at least 1, --background-slots within 1..--parallel")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout
    )
    token = args.token_file.read_text().strip()
    if not token:
        raise SystemExit(f"{args.token_file} holds no token")
    began = time.perf_counter()
    text = LlamaEngine(
        args.gguf or bundled_gguf_path(),
        name=args.model_name,
        threads=args.threads,
        parallel=args.parallel,
        n_ctx=args.n_ctx,
        prompt_cache_mib=args.prompt_cache_mib,
        max_items=args.max_items,
        max_string_length=args.max_string_length,
    )
    embeddings = LocalEmbedder()
    embeddings.load()
    limits = Limits(
        max_output_tokens=args.max_output_tokens,
        max_generation_seconds=args.max_generation_seconds,
        max_queue_seconds=args.max_queue_seconds,
        max_waiting=args.max_waiting,
        slots=args.parallel,
        background_slots=args.background_slots,
        preempt=args.preempt,
        slice_tokens=args.slice_tokens,
        aging_seconds=args.aging_seconds,
        gemini_like=args.gemini_like,
    )
    server = build_server(ModelService(text, embeddings, limits), token, args.host, args.port)

    def stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()  # not from this thread

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info(
        "serving %s and %s on %s:%d (loaded in %.1fs)",
        text.name,
        embeddings.model_name,
        args.host,
        args.port,
        time.perf_counter() - began,
    )
    server.serve_forever(poll_interval=0.1)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
