"""Structured model calls: output that breaks its schema is retried once, then fails loudly."""

from __future__ import annotations

import logging
from typing import TypeVar

from pydantic import BaseModel

from shared.errors import ModelOutputInvalid
from shared.ports import LLM, LLMRequest, Usage

M = TypeVar("M", bound=BaseModel)
log = logging.getLogger("structured")


def structured_with_retry(llm: LLM, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
    try:
        return llm.structured(request, schema)
    except ModelOutputInvalid as first:
        log.warning("model output invalid, retrying once", extra={"schema": schema.__name__})
        try:
            return llm.structured(request, schema)
        except ModelOutputInvalid as second:
            raise ModelOutputInvalid(
                f"{schema.__name__}: model output invalid twice ({first.message})"
            ) from second
