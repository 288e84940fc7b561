"""A chat's title from the user's own words, without a model call: the first sentence of
the first message that says something (a plain greeting names nothing), with its spacing
cleaned, cut at a word boundary."""

from __future__ import annotations

import re

from shared.conversation.greetings import is_plain_greeting

MAX_TITLE_CHARS = 60
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s")
_TRAILING = " ,;:-–—."


def title_from(message: str) -> str | None:
    """The title a chat takes from ``message``, or None: it names nothing."""
    text = " ".join(message.split())
    if not text or is_plain_greeting(text):
        return None
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(_TRAILING)
    if len(sentence) <= MAX_TITLE_CHARS:
        return sentence or None
    cut = sentence[: MAX_TITLE_CHARS + 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut[:MAX_TITLE_CHARS].rstrip(_TRAILING) + "…"
