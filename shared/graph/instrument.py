"""Every node runs through ``node(name)``: one log line, one trace entry, typed failures.

The wrapper times the node, gives it its own token tally (see ``metering``), logs
``{turn_id, node, ms, input_tokens, output_tokens}`` in Cloud Logging's JSON format and adds a
``NodeRun`` to the state's trace. A failure leaves as ``NodeFailed`` naming the node, with the
typed cause (an unexpected exception becomes an ``AppError``); LangGraph's own control flow
(``interrupt()``) passes through untouched.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from shared.errors import AppError, NodeFailed
from shared.graph.context import TurnContext
from shared.graph.state import TurnState
from shared.models.domain import NodeRun

log = logging.getLogger("graph")


class NodeFn(Protocol):
    def __call__(self, state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]: ...


def node(name: str) -> Callable[[NodeFn], NodeFn]:
    def wrap(fn: NodeFn) -> NodeFn:
        @functools.wraps(fn)
        def run(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
            context = runtime.context
            started = time.perf_counter()
            with context.meter.node_scope() as tally:
                try:
                    update = fn(state, runtime)
                except (GraphBubbleUp, NodeFailed):
                    raise
                except AppError as error:
                    _log_failure(context, name, error)
                    raise NodeFailed(name, error) from error
                except Exception as error:
                    log.exception("node crashed", extra={"turn_id": context.turn_id, "node": name})
                    raise NodeFailed(name, AppError(f"{type(error).__name__}")) from error
            entry = NodeRun(
                node=name,
                ms=round((time.perf_counter() - started) * 1000, 2),
                input_tokens=tally.input_tokens,
                output_tokens=tally.output_tokens,
            )
            log.info(
                "node done",
                extra={"turn_id": context.turn_id, **entry.model_dump()},
            )
            return {**update, "trace": [*update.get("trace", []), entry]}

        return run

    return wrap


def _log_failure(context: TurnContext, name: str, error: AppError) -> None:
    log.warning(
        "node failed",
        extra={
            "turn_id": context.turn_id,
            "node": name,
            "code": error.code,
            "error": error.message,
        },
    )
