"""End-to-end memory evaluation through the real product.

    make eval DATASET=eval/data/own.locomo.json PROVIDER=local|vertex
    .venv/bin/python -m eval.run --dataset PATH --provider local|vertex|scripted
        [--profile dev|test] [--serve] [--conversations N] [--sessions N] [--questions N]
        [--out report.json]

Every session of the dataset (LoCoMo or LongMemEval layout, ``eval/layouts.py``) is sent as
turns over HTTP to ``/v1`` through the stack's one origin, one chat per session, at the
session's date (the functions' clock is moved, ``eval/product.py``); extraction runs
through the Cloud Tasks queue into PostgreSQL, and the next session starts when it is done.
Then each question is asked as a turn in a chat of its own (after its ``context`` messages,
if any), the day after the last session. Scored per question:

- **evidence recall@k**: the rank of the first item the turn's retrieval put before the
  model (its record's ``retrieved``) that came from an evidence message: a fact extracted
  from it, or (the second figure) the summary of its session;
- **correctness**: the configured model judges the reply against the gold answer with the
  published rubric (``eval/JUDGE.md``); ``--provider scripted`` is a term-overlap stand-in
  for the command's own test, never a figure to publish;
- **tokens and latency**: the question turn's model tokens (from its record) and its
  wall-clock time, p50 and p95.

``--serve`` (what ``make eval`` does) restarts the profile's functions with
``MODEL_PROVIDER`` and the eval clock; without it the functions already served are used.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from pathlib import Path

from eval import layouts
from eval.judge import judge_patiently, overlap_judge
from eval.product import Product, TurnResult
from eval.report import QuestionResult, summary
from scripts.stacklib.profile import Profile
from shared.config import Settings
from shared.errors import ModelOutputInvalid
from shared.model_catalog import DEFAULT_EMBEDDING_MODEL, DEFAULT_MODELS
from shared.models.domain import TurnRecord
from shared.ports import LLM, Usage
from testkit.stack_env import require_stack_env

ROOT = Path(__file__).resolve().parent.parent
EXTRACTION_WAIT_SECONDS = 900.0
JOB_WAIT_SECONDS = 180.0  # an agent job's answer on the local model: a few calls
ASK_ATTEMPTS = 4
BUSY_MODEL = "dependency_unavailable"  # the turn's model call was turned away (429)


def ingest(product: Product, user: str, conversation: layouts.Conversation) -> dict[str, str]:
    """Send every session; returns turn id -> the dataset's message id, and chat id ->
    session id (``session:<chat>`` in the retrieved list), in one map."""
    origin: dict[str, str] = {}
    for session in conversation.sessions:
        started = time.monotonic()
        product.live_at(session.when)
        chat_id, turns = None, []
        for message in session.messages:
            result = product.turn(user, chat_id, message.text, _client_id(message.id))
            chat_id = result.chat_id
            origin[result.turn_id] = message.id
            record = product.record(user, _client_id(message.id))
            if record and record.metadata and record.metadata.extraction_enqueued:
                turns.append(result.turn_id)
        if chat_id:
            origin[f"session:{chat_id}"] = session.id
        drained = product.wait_for_extraction(user, turns, EXTRACTION_WAIT_SECONDS)
        failed = f", {drained.unapplied} failed" if drained.unapplied else ""
        queued = f", {drained.queued} still queued" if drained.queued else ""
        print(f"  {session.id}: {len(session.messages)} turns, {drained.applied} extracted"
              f"{failed}{queued} ({time.monotonic() - started:.0f} s)", flush=True)  # fmt: skip
    return origin


def ask(
    product: Product, llm: LLM, user: str, question: layouts.Question, origin: dict[str, str]
) -> QuestionResult:
    product.live_at(question.asked_at)
    for attempt in range(ASK_ATTEMPTS):
        result, record = _asked(product, user, question, f"-r{attempt}" if attempt else "")
        meta = record.metadata if record else None
        if not (meta and meta.error_code == BUSY_MODEL) or attempt == ASK_ATTEMPTS - 1:
            break
        time.sleep(2.0 ** (attempt + 2))  # the model service turned a call away: again later
    reply = result.reply
    if meta and meta.jobs_published:  # handed to an agent: its answer comes in the chat
        answered = product.agent_result(user, result.chat_id, result.turn_id, JOB_WAIT_SECONDS)
        reply = f"{reply}\n{answered}" if answered else reply
    retrieved = meta.retrieved if meta else []
    facts = {f.id: f for f in product.facts(user, [k for k in retrieved if ":" not in k])}
    sources = [
        origin.get(facts[k].source.turn_id or "", "") if k in facts else origin.get(k, "")
        for k in retrieved
    ]
    correct: bool | None
    try:
        verdict, usage = judge_patiently(llm, question.text, question.answer, reply)
        correct, reason = verdict.correct, verdict.reason
    except ModelOutputInvalid:  # a weak judge's broken verdict loses no other question
        correct, reason, usage = None, "the judge broke its schema twice", Usage()
    return QuestionResult(
        question=question,
        reply=reply,
        sources=sources,
        correct=correct,
        reason=reason,
        tokens=(meta.input_tokens + meta.output_tokens) if meta else 0,
        judge_tokens=usage.input_tokens + usage.output_tokens,
        ms=result.ms,
        route=(meta.understanding.label if meta and meta.understanding else None) or "",
    )


def _asked(
    product: Product, user: str, question: layouts.Question, retry: str
) -> tuple[TurnResult, TurnRecord | None]:
    """The question in a chat of its own (a retry in a fresh one), after its context."""
    chat_id = None
    for n, text in enumerate(question.context):
        chat_id = product.turn(user, chat_id, text, f"{question.id}-c{n}{retry}").chat_id
    client_id = _client_id(question.id + retry)
    result = product.turn(user, chat_id, question.text, client_id)
    return result, product.record(user, client_id)


def answerable(
    questions: list[layouts.Question], sessions: list[layouts.Session]
) -> list[layouts.Question]:
    """The questions whose evidence was all said in these sessions (``--sessions`` feeds
    the first N: a question about a later session could not be answered)."""
    fed = {session.id for session in sessions}
    return [q for q in questions if {layouts.session_of(e) for e in q.evidence} <= fed]


def _client_id(dataset_id: str) -> str:
    return "e" + "".join(ch if ch.isalnum() or ch in "_.:-" else "-" for ch in dataset_id)[:120]


# ``--provider vertex`` over a dev stack: Gemini on Vertex AI instead of the local model
# service that the dev env names (the operator's Google credentials are used).
VERTEX = {
    "MODEL_PROVIDER": "vertex",
    "VERTEX_BASE_URL": "",
    "VERTEX_ACCESS_TOKEN": "",
    # each kind of work on its default model (shared/model_catalog.py)
    "VERTEX_MODEL": DEFAULT_MODELS["reply"],
    **{f"VERTEX_{k.upper()}_MODEL": m for k, m in DEFAULT_MODELS.items() if k != "reply"},
    "VERTEX_EMBEDDING_MODEL": DEFAULT_EMBEDDING_MODEL,
    "EMBEDDING_DIMENSION": "768",
    "UNDERSTANDING_ANSWERS": "ground",
    "MODEL_STRENGTH": "strong",
    "EXTRACTION_READER": "model",
}


JUDGES = {
    "local": "term overlap with the gold answer (deterministic; the local model called every "
    "answer correct, so it does not judge)",
    "scripted": "term overlap with the gold answer (deterministic)",
    "vertex": "the product's model (Gemini)",
}


def _judge_model(provider: str) -> LLM:
    """The judge: Gemini for ``vertex``; a deterministic rule that can fail otherwise
    (SmolLM2, the local model, judged every one of 30 wrong answers correct)."""
    if provider in ("scripted", "local"):
        return overlap_judge()
    from shared.deps.models import build_models

    if provider == "vertex":
        os.environ.update(VERTEX)
    return build_models(Settings())[0]


def run(args: argparse.Namespace) -> dict[str, object]:
    conversations = layouts.read(Path(args.dataset))[: args.conversations]
    settings = Settings()
    state = Path(os.environ["STACK_STATE_DIR"])
    product = Product(settings, state, Profile(args.profile).url("web").rstrip("/"))
    llm, run_id, results = _judge_model(args.provider), uuid.uuid4().hex[:8], []
    try:
        for conversation in conversations:
            conversation.sessions = conversation.sessions[: args.sessions]
            user = f"eval-{run_id}-{conversation.id}"[:100]
            print(f"{conversation.id}: {len(conversation.sessions)} sessions as {user}")
            origin = ingest(product, user, conversation)
            questions = answerable(conversation.questions, conversation.sessions)
            for question in questions[: args.questions]:
                started = time.monotonic()
                results.append(ask(product, llm, user, question, origin))
                verdict = {True: "correct", False: "wrong", None: "unjudged"}[results[-1].correct]
                seconds = time.monotonic() - started
                print(f"  {question.id}: {verdict} ({seconds:.0f} s)", flush=True)
    finally:
        product.close()
    report = summary(results, args.k)
    report |= {
        "dataset": args.dataset,
        "provider": args.provider,
        "judge": JUDGES[args.provider],
        "run": run_id,
    }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", default=str(ROOT / "eval" / "data" / "own.locomo.json"))
    parser.add_argument("--provider", choices=["local", "vertex", "scripted"], default="local")
    parser.add_argument("--profile", choices=["dev", "test"], default="dev")
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--conversations", type=int)
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--questions", type=int)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--out")
    args = parser.parse_args()
    state = ROOT / (".stack" if args.profile == "dev" else f".stack-{args.profile}")
    require_stack_env(state / "env")
    os.environ.setdefault("CLOCK_OFFSET_FILE", str(state / "eval-clock"))
    if args.serve:
        _serve(args.profile, args.provider, os.environ["CLOCK_OFFSET_FILE"])
    report = run(args)
    text = json.dumps(report, indent=1, default=str)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(json.dumps(report["summary"], indent=1))


def _serve(profile: str, provider: str, clock_file: str) -> None:
    from scripts import serve

    if provider == "scripted":
        raise SystemExit("--serve runs a real model: use --provider local or vertex")
    serve.down(profile)
    if provider == "local" and profile != "dev":
        raise SystemExit("--provider local serves the dev stack's model service: --profile dev")
    extra = {"CLOCK_OFFSET_FILE": clock_file, "RATE_LIMIT_PER_MINUTE": "100000",
             "LOG_LEVEL": "WARNING", **(VERTEX if provider == "vertex" else {})}  # fmt: skip
    serve.up(profile, extra_env=extra)


if __name__ == "__main__":
    main()
