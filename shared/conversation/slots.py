"""Single-valued slots of a fact (one employer, one job, one home, one partner, one owner of
a pet, one age: "Max is 5 years old" replaces "Max is 4 years old"), and a correction said
plainly. A job is "works as a nurse" or "is a baker" when the
noun is an everyday occupation (``occupations.py``): "is a vegetarian" fills no slot.

A newer fact on a slot with another value supersedes the older one: newest wins, decided by
these rules before any model's judgement (MemoryAgentBench, 2025, measured newest-version-wins
at 78-95% on single-hop conflicts). "No longer works at UBS" closes the slot it names: it
supersedes "works at UBS" only, never another employer.

Correction words ("actually", "now", "no wait") say when a fact changed, not what it is:
``plainly`` takes them out before a fact is stored, so "Actually Luca works at Bosch now." is
kept as "Luca works at Bosch."
"""

from __future__ import annotations

import re

from shared.conversation.occupations import OCCUPATIONS
from shared.conversation.text import fold

# where a slot's value ends: punctuation, or a word that starts another part of the sentence
_STOP = (
    r"(?=[.,;!?]| (?:in|since|from|with|and|as|last|next|this|on|at|for|until|now|anymore"
    r"|any more|these days|again)\b|$)"
)
_EMPLOYER = r"\b(?:works?|working|employed|job|joined)(?: \w+)?? (?:at|for|by|with) (.+?)"
_JOB = r"\b(?:works?|working|employed)(?: (?:at|for|in) [^.,;]+?)? as (?:an? )?(.+?)"
_HOME = r"\b(?:lives?|living|moved|relocated|resides?) (?:back )?(?:in|to|at) (.+?)"
_PARTNER = (
    r"(?:\bis (?:married to|dating|engaged to|in a relationship with)"
    r"|(?:'s|’s) (?:partner|wife|husband|girlfriend|boyfriend|fianc[ée]e?|spouse) is) (.+?)"
)
_OWNER = r"\b(?:belongs to|is owned by) (.+?)"
_NAME = r"^the user's name is (.+?)"  # "hi, i'm sam", then "actually call me samuel"
# "Max is 5 years old", or said bare at the end ("Rosa is 88.")
_AGE = (
    "age",
    re.compile(r"\bis (\d{1,3})(?: (?:years?|yrs) old\b|\s*[.!]?$)", re.IGNORECASE),
)
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    *(
        (slot, re.compile(pattern + _STOP, re.IGNORECASE))
        for slot, pattern in (
            ("employer", _EMPLOYER),
            ("job", _JOB),
            ("home", _HOME),
            ("partner", _PARTNER),
            ("owner", _OWNER),
            ("name", _NAME),
        )
    ),
    _AGE,
)
# A possessive before the slot names someone else's thing ("Anna's son lives in"); "the
# user's friend Nadia moved to" names the fact's own subject, as kept-as-said text puts it.
_OTHERS = re.compile(r"(?<!\bthe user)(?:'s|’s) ", re.IGNORECASE)
# "Bernd is a baker in Hamburg", "Anna is no longer a nurse": a job when the noun is one
_IS_A = re.compile(
    r"\bis (?P<ended>(?:no longer|not|now|still) )?an? (?P<words>(?:[\w-]+ ){0,2}[\w-]+)",
    re.IGNORECASE,
)
# "a great cook", "a terrible driver": a skill, not a job
_PRAISE = frozenset(
    {"good", "great", "bad", "terrible", "excellent", "amazing", "brilliant", "fantastic",
    "wonderful", "awful", "decent", "lousy", "fine", "natural", "born", "keen", "careful",
    "fast", "slow", "better", "best", "worse", "worst"}
)  # fmt: skip
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?\d[\d \-/().]{6,}\d")
_ENDED = re.compile(r"(?:n't\b|\bno longer\b|\bnot\b|\bnever\b)", re.IGNORECASE)
_ENDED_AFTER = re.compile(r"^ (?:anymore|any more)\b", re.IGNORECASE)
NOT = "not "  # a slot's value prefixed so: the slot is no longer that value

_LEADING = re.compile(
    r"^(?:(?:actually|oh|ah|well|no wait|wait|sorry|oops|whoops|my bad|my mistake|correction"
    r"|update|in fact|by the way|btw)"
    r"\b[\s,:;!-]*)+",
    re.IGNORECASE,
)
_NOW = re.compile(r",? \b(?:now|actually|these days|nowadays)\b(?=[ .,!?]|$)")
_TRAILING_NOW = re.compile(r"\s*\b(?:now|actually)\s*([.!?]*)$", re.IGNORECASE)


def plainly(text: str) -> str:
    """The fact without the words that only said it is a correction."""
    said = _LEADING.sub("", text.strip())
    said = _TRAILING_NOW.sub(r"\1", said)
    said = _NOW.sub("", said)
    return (said[:1].upper() + said[1:]) if said else text


def slots_of(text: str) -> dict[str, str]:
    """Every single-valued slot a fact fills, with its value ("employer": "bosch"); an ended
    one ("no longer works at UBS") as ``NOT`` + the value."""
    found: dict[str, str] = {}
    if email := _EMAIL.search(text):
        found["email"] = email.group().lower()
    if phone := _PHONE.search(text):
        found["phone"] = re.sub(r"\D", "", phone.group())
    for slot, pattern in _SLOTS:
        match = pattern.search(text)
        if match is None or (_OTHERS.search(text[: match.start()]) and slot != "partner"):
            continue  # "Anna's son lives in ...": the slot of someone else
        value = fold(match.group(1))
        # "no longer works at UBS", "doesn't work at UBS anymore"; not "at Bosch, not UBS"
        ended = _ENDED.search(text[: match.start(1)]) or _ENDED_AFTER.match(text[match.end(1) :])
        found[slot] = NOT + value if ended else value
    if "job" not in found and (job := _job_said_plainly(text)) is not None:
        found["job"] = job
    return found


def _job_said_plainly(text: str) -> str | None:
    """ "is a baker": the first occupation among the (up to three) words after the article;
    nothing when the job is someone else's ("Anna's son is a baker")."""
    for match in _IS_A.finditer(text):
        if _OTHERS.search(text[: match.start()]):
            continue
        words = match["words"].lower().split()
        job = next((w for w in words if w in OCCUPATIONS), None)
        if job is not None and not _PRAISE & set(words[: words.index(job)]):
            ended = match["ended"] in ("no longer ", "not ")
            return NOT + job if ended else job
    return None


def clashes(new: dict[str, str], old: dict[str, str]) -> bool:
    """Whether a newer fact's slots say an older one no longer holds."""
    for slot, value in new.items():
        before = old.get(slot)
        if before is None:
            continue
        if value.startswith(NOT):
            if before == value.removeprefix(NOT):
                return True
        elif before != value:
            return True
    return False
