"""What a request is compared by, and how a past plan is adapted to a new request.

**Shape.** Embeddings put much weight on names: all-MiniLM-L6-v2 rates "Plan a trip to Rome
in May" and "Plan a trip to Lisbon in June" at 0.46 cosine, about as close as two unrelated
tasks. The task is the same, only its parameters differ, so requests are embedded by their
shape: figures, quoted text, acronyms and capitalised words inside a sentence (names,
places, months) become one placeholder ("Plan a trip to X in X"). German capitalises every
noun, so there only figures, quotes and acronyms are masked.

**Adaptation.** The past and the new request are aligned word by word; where a stretch of
the past one was replaced by a stretch of the new one ("AI agent" -> "RPA"), the plan's
goals get the same substitution. An adaptation is refused (None) when it cannot be trusted
to carry no trace of the past request: words were added or dropped rather than replaced
(the plan knows nothing of "in Asia"), too much differs, or a masked word of the past
request (a name, a figure) is still in a goal afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

from shared.models.history import PlannedStep

PLACEHOLDER = "X"
MAX_SUBSTITUTIONS = 3
MAX_GOAL_CHARS = 2000
_TOKEN = re.compile(r"\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”|\d[\w.,:/-]*|\w+(?:['’-]\w+)*|[^\w\s]")
_SENTENCE_END = frozenset({".", "!", "?", ":", ";", "]", ")"})
_NOUNS_CAPITALISED = frozenset({"de"})


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    masked: bool  # a parameter of the request: a name, a figure, a quote


def tokens(text: str, language: str = "en") -> list[Token]:
    found: list[Token] = []
    initial = True  # at the start of a sentence
    for match in _TOKEN.finditer(text):
        word = match.group()
        found.append(Token(word, match.start(), match.end(), _masked(word, initial, language)))
        if word[0].isalnum() or word[0] in '"“':
            initial = False
        elif word in _SENTENCE_END:
            initial = True
    return found


def _masked(word: str, initial: bool, language: str) -> bool:
    if word[0] in '"“' or word[0].isdigit():
        return True
    if not word[0].isalpha():
        return False
    letters = [c for c in word if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return True  # an acronym: RPA, AI
    return word[0].isupper() and not initial and language not in _NOUNS_CAPITALISED


def shape(text: str, language: str = "en") -> str:
    """The request with its parameters masked, runs of them as one placeholder."""
    out: list[str] = []
    for token in tokens(text, language):
        word = PLACEHOLDER if token.masked else token.text.casefold()
        if not (word == PLACEHOLDER and out and out[-1] == PLACEHOLDER):
            out.append(word)
    return " ".join(out)


def substitutions(past: str, new: str, language: str = "en") -> list[tuple[str, str]] | None:
    """The (past stretch, new stretch) pairs that turn ``past`` into ``new``; None when
    the two differ by more than replaced stretches."""
    old_tokens, new_tokens = tokens(past, language), tokens(new, language)
    matcher = SequenceMatcher(
        a=[t.text.casefold() for t in old_tokens],
        b=[t.text.casefold() for t in new_tokens],
        autojunk=False,
    )
    pairs: list[tuple[str, str]] = []
    changed = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op != "replace":
            return None  # added or dropped words: the plan cannot know what they mean
        pairs.append((_span(past, old_tokens[i1:i2]), _span(new, new_tokens[j1:j2])))
        changed += i2 - i1
    if len(pairs) > MAX_SUBSTITUTIONS or changed * 2 > len(old_tokens):
        return None
    return pairs


def adapt(
    past_request: str, request: str, plan: list[PlannedStep], language: str = "en"
) -> list[PlannedStep] | None:
    """The past plan with the new request's parameters in its goals, or None."""
    pairs = substitutions(past_request, request, language)
    if pairs is None:
        return None
    adapted = []
    for step in plan:
        goal = _substitute(step.goal, pairs)
        if len(goal) > MAX_GOAL_CHARS:
            return None
        adapted.append(step.model_copy(update={"goal": goal}))
    if _traces(past_request, request, pairs, adapted, language):
        return None
    return adapted


def _substitute(goal: str, pairs: list[tuple[str, str]]) -> str:
    """All pairs in one pass, longest first: "Pixel 9" -> "iPhone", "iPhone" -> "Galaxy"
    swaps the two, it never turns the first into the second's replacement."""
    if not pairs:
        return goal
    replacement = {old.casefold(): new for old, new in pairs}
    alternatives = "|".join(re.escape(old) for old in sorted(replacement, key=len, reverse=True))
    pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
    return pattern.sub(lambda match: replacement[match.group().casefold()], goal)


def _traces(
    past: str,
    request: str,
    pairs: list[tuple[str, str]],
    plan: list[PlannedStep],
    language: str,
) -> bool:
    """Does a goal still name a parameter of the past request that the new one lacks?"""
    kept = _atoms(t.text for t in tokens(request, language))
    replaced = {t.text.casefold() for old, _ in pairs for t in tokens(old, language)}
    gone = (
        _atoms(t.text for t in tokens(past, language) if t.masked and t.text.casefold() in replaced)
        - kept
    )
    return bool(gone & _atoms(t.text for step in plan for t in tokens(step.goal, language)))


def _atoms(words: Iterable[str]) -> set[str]:
    """Words cut at hyphens and the like: "5-day" leaves "5" and "day" to look for."""
    return {atom for word in words for atom in re.findall(r"\w+", word.casefold())}


def _span(text: str, stretch: list[Token]) -> str:
    return text[stretch[0].start : stretch[-1].end]
