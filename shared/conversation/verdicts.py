"""The user's short verdict that what the assistant just did was wrong ("that was wrong",
"das war falsch"), in the five languages the greeting rule knows. A rule, no model: only a
message that is nothing but such a verdict counts, so "is it wrong to ..." never does."""

from __future__ import annotations

import re

from shared.conversation.text import fold

_VERDICT = re.compile(
    r"^(no[, ]+)?("
    r"(that|this|it)( was|'s| is)( (all|completely|totally))? (wrong|incorrect|not right)"
    r"|(that|this|it)( was|'s| is) not what i (asked|wanted)|wrong|not what i (asked|wanted)"
    r"|(das|es) (war|ist)( (ganz|vollig|leider))? (falsch|nicht richtig)|falsch"
    r"|(c'?est|c'etait|ce n'?est pas|ce n'etait pas) (faux|ca|juste|bon)|faux"
    r"|(eso |esto )?(esta|estuvo|fue) mal|(es|era|fue) incorrecto|incorrecto"
    r"|(e|era|e stato) sbagliato|sbagliato|(non e|non era) giusto"
    r")( again)?$"
)


def is_negative_verdict(message: str) -> bool:
    return bool(_VERDICT.match(fold(message)))
