"""A prepared turn's reply, as JSON or Server-Sent Events, for the turn and resume functions."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import flask

from shared.app.turn import Chunk, TurnService
from shared.app.turn_input import PreparedTurn
from shared.errors import AppError
from shared.web import json_response, sse, sse_response, wants_stream


def stream_events(service: TurnService, turn: PreparedTurn) -> Iterator[str]:
    """``chunk`` events, then ``interrupt`` or ``done`` with the whole response; a failure
    after the status line was sent is reported in-band as ``error``."""
    try:
        for event in service.events(turn):
            if isinstance(event, Chunk):
                yield sse("chunk", {"text": event.text})
            else:
                name = "interrupt" if event.response.interrupt else "done"
                yield sse(name, event.response.model_dump(mode="json"))
    except AppError as error:
        yield sse("error", error.to_body()["error"])
    except Exception:
        logging.getLogger("turn").exception("turn failed while streaming")
        yield sse("error", AppError("internal error").to_body()["error"])


def reply(
    request: flask.Request, service: TurnService, turn: PreparedTurn, stream: bool = False
) -> flask.Response:
    """Stream when the body asks for it or the client accepts ``text/event-stream``."""
    if wants_stream(request, stream):
        return sse_response(stream_events(service, turn))
    return json_response(service.run_prepared(turn).model_dump(mode="json"))
