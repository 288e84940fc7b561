"""Extractive answers to questions about a known person: the stored fact, quoted.

"Where does Anna live?" is answered with the retrieved fact that says where Anna lives, as
it is stored; nothing is composed. No answer (None) when the question is not one of the
shapes below, when no retrieved fact of that person says it, when two different people
of that name have such facts, or when two facts disagree (two places to live).

"What do you know about Anna?" (or "about me", or about a group: "my family", "my
parents", "my kids"...) quotes every retrieved fact about them; ``roles_asked`` tells the
memory stage which people such a group question is about, so their facts are retrieved
whatever the question's words are near. A quote speaks to the user: "The user is ..." reads
"You are ...", "the user's" "your".
"""

from __future__ import annotations

import re

from shared.conversation.occupations import OCCUPATIONS
from shared.conversation.relations import TIER_RELATIONS
from shared.conversation.second_person import to_you
from shared.conversation.text import fold as _fold
from shared.models.base import Strict
from shared.models.memory import PersonRole
from shared.understanding.first_names import name_gender
from shared.understanding.result import Answer

_WHO = r"(?P<who>[A-Za-zÀ-ÿ' -]{1,60}?)"
_PARENT = r"(?P<parent>mother|mom|mum|father|dad|parents?)"
# A fact that says someone's work: "works as ...", "works at Siemens", "is a plumber".
_JOB = (
    r"\b(?:works? (?:as|at|for)|(?:is|was) (?:an? )?(?:\w+ )?(?:"
    + "|".join(sorted(OCCUPATIONS, key=len, reverse=True))
    + r"))\b"
)
# question shape -> what a fact that answers it says
_SHAPES: tuple[tuple[re.Pattern[str], re.Pattern[str], bool], ...] = tuple(
    (re.compile(question + r"\s*\?*$", re.IGNORECASE), re.compile(says, re.IGNORECASE), many)
    for question, says, many in (
        (
            rf"^where (?:does|do) {_WHO} live(?: now| these days)?",
            r"\b(?:lives? (?:in|at)|(?:moved|relocated) (?:back )?to)\b",
            False,
        ),
        (
            rf"^where (?:does|do) {_WHO} work",
            r"\bworks? (?:at|for|in|as\b.*\b(?:in|at|for))\b",
            False,
        ),
        (rf"^(?:what is|what's|whats) {_WHO}(?:'s|’s) name", r"\bthe user's\b", False),
        (rf"^what (?:does|do) {_WHO} do for (?:a living|work)", _JOB, False),
        (rf"^(?:what is|what's|whats) {_WHO}(?:'s|’s) (?:job|occupation)", _JOB, False),
        (rf"^when is {_WHO}(?:'s|’s) birthday", r"\bbirthday\b", False),
        (
            rf"^(?:what is|what's|whats) {_WHO}(?:'s|’s) favou?rite \w+(?: \w+)?",
            r"\bfavou?rite\b",
            True,
        ),
        (rf"^how old is {_WHO}", r"\b(?:years? old|born|is \d{1,3})\b", False),
        (rf"^what (?:does|do) {_WHO} (?:like|love|enjoy)", r"\b(?:likes?|loves?|enjoys?)\b", True),
        (rf"^(?:what is|what's) {_WHO} allergic to", r"\ballergic to\b", True),
        (rf"^is {_WHO} allergic to anything", r"\ballergic to\b", True),
        # Kin, as the tier stores it (``kin``): "Luca is the son of the user's sister Anna"
        # about Luca, "Anna has a son called Luca" about Anna.
        (rf"^who (?:is|are) {_WHO}(?:'s|’s) {_PARENT}", r"\b(?:son|daughter|child|kid) of\b", True),
        (rf"^who (?:is|are) {_WHO}(?:'s|’s) (?:sons?|boys?)", r"\bhas an? son\b", True),
        (rf"^who (?:is|are) {_WHO}(?:'s|’s) (?:daughters?|girls?)", r"\bhas an? daughter\b", True),
        (
            rf"^who (?:is|are) {_WHO}(?:'s|’s) (?:kids?|child|children)",
            r"\bhas an? (?:son|daughter|child|kid)\b",
            True,
        ),
        (
            rf"^who (?:is|are) {_WHO}(?:'s|’s) (?:wife|husband|partner|spouse)",
            r"\bhas an? (?:wife|husband|partner)\b|\b(?:wife|husband|partner) of\b",
            False,
        ),
        (rf"^how (?:is|are) {_WHO} related to (?:me|us)", r"\bthe user's\b", True),
        (rf"^who (?:is|are) {_WHO} to me", r"\bthe user's\b", True),
    )
)
# Shapes that ask about a person only when the name is one the user told of ("what does
# dropbox do?" asks about the world): they answer, never make the question one about someone.
_KNOWN_ONLY_SHAPES: tuple[tuple[re.Pattern[str], re.Pattern[str], bool], ...] = (
    (
        re.compile(rf"^what (?:does|do) {_WHO} do(?: now| these days)?\s*\?*$", re.IGNORECASE),
        re.compile(_JOB, re.IGNORECASE),
        False,
    ),
)
_NEGATED = re.compile(r"\b(not|n't|no longer|never|dislikes?)\b", re.IGNORECASE)
_ABOUT = re.compile(
    r"^(?:what (?:else )?do you know|what can you tell me|tell me(?: everything you know)?)"
    rf" about {_WHO}\s*[?.!]*$",
    re.IGNORECASE,
)
FAMILY: frozenset[PersonRole] = frozenset(
    {"partner", "child", "parent", "sibling", "grandparent", "grandchild", "aunt_uncle",
     "cousin", "niece_nephew", "in_law"}
)  # fmt: skip
# A group the user names by relation: the roles of the people in it.
GROUPS: dict[str, frozenset[PersonRole]] = {
    "my family": FAMILY,
    "my grandparents": frozenset({"grandparent"}),
    "my grandchildren": frozenset({"grandchild"}),
    "my grandkids": frozenset({"grandchild"}),
    "my cousins": frozenset({"cousin"}),
    "my in-laws": frozenset({"in_law"}),
    "my parents": frozenset({"parent"}),
    "my kids": frozenset({"child"}),
    "my children": frozenset({"child"}),
    "my siblings": frozenset({"sibling"}),
    "my friends": frozenset({"friend"}),
    "my colleagues": frozenset({"colleague"}),
    "my pets": frozenset({"pet"}),
}


class KnownFact(Strict):
    """A retrieved fact with the name of whom it is about (None: the user)."""

    id: str
    subject_id: str | None
    subject_name: str | None
    text: str
    subject_role: PersonRole | None = None  # for a question about a group ("my family")


_NOT_PEOPLE = frozenset(
    {"you", "it", "this", "that", "they", "there", "one", "the weather", "she", "he", "her",
     "him", "them"}
)  # fmt: skip


def asks_about_someone(question: str) -> bool:
    """A question of a shape above about someone ("where does luca work?", "what do you
    know about kim"), not about the assistant or a thing ("where do you live?")."""
    text = question.strip()
    for pattern in (*(asked for asked, _, _ in _SHAPES), _ABOUT):
        match = pattern.match(text)
        if match is not None:
            return _fold(match["who"]) not in _NOT_PEOPLE
    return False


_OWNED = re.compile(r"^(?:my|our|your|his|her|their|the|a|an)\b", re.IGNORECASE)


def asked_name(question: str) -> str | None:
    """The name a question of a shape above asks about, as a name is written ("where does
    luca work?" -> "Luca"); None for "my brother", "me", "you" or a phrase."""
    text = question.strip()
    for pattern in (*(asked for asked, _, _ in _SHAPES), _ABOUT):
        match = pattern.match(text)
        if match is None:
            continue
        who = match["who"].strip().removesuffix("'s").removesuffix("’s")
        words = who.split()
        plain = 0 < len(words) <= 2 and all(w.isalpha() for w in words)
        if not plain or _OWNED.match(who) or _fold(who) in {*_NOT_PEOPLE, "i", "me"}:
            return None
        return " ".join(w[:1].upper() + w[1:] for w in words)
    return None


def group_asked(question: str) -> str | None:
    """The group a "what do you know about my family?" question names, as the user said it
    ("my family"), or None."""
    match = _ABOUT.match(question.strip())
    return _fold(match["who"]) if match and _fold(match["who"]) in GROUPS else None


def asks_about_the_user(question: str) -> bool:
    """ "What do you know about me?"."""
    match = _ABOUT.match(question.strip())
    return match is not None and _fold(match["who"]) in ("me", "myself")


def roles_asked(question: str) -> frozenset[PersonRole]:
    """The roles of the group a "what do you know about my family?" question names."""
    match = _ABOUT.match(question.strip())
    return GROUPS.get(_fold(match["who"]), frozenset()) if match else frozenset()


_USERS_NAME = re.compile(
    r"^(?:what is|what's|whats|do you (?:know|remember)|tell me) my name\s*[?.!]*$",
    re.IGNORECASE,
)
_NAME_SAID = re.compile(r"^the user's name is\b", re.IGNORECASE)
_NO_NAME = "I don't know your name yet. Tell me and I'll keep it."
_NAME_SAID_AS = re.compile(r"^the user's name is (?P<name>.+?)\.?$", re.IGNORECASE)


def answer_from_facts(
    question: str, facts: list[KnownFact], names: list[str] | None = None
) -> Answer | None:
    """``names``: the people the question names ("my brother Tom" asks about Tom)."""
    if _USERS_NAME.match(question.strip()):  # "what's my name?": the user's own, or none yet
        return _users_name(facts)
    everything = _ABOUT.match(question.strip())
    if everything is not None:
        return _everything_about(_fold(everything["who"]), facts, names)
    asked = _asked(question, facts, names)
    if asked is None:
        return None
    _, hits, many = asked
    if not hits or len({f.subject_id for f in hits}) > 1:
        return None
    if not many and len({_fold(f.text) for f in hits}) > 1:
        return None  # two facts disagree: the model (or the user) must settle it
    texts = list(dict.fromkeys(_quoted(f.text) for f in hits))
    return Answer(text=" ".join(texts), fact_ids=[f.id for f in hits])


def _users_name(facts: list[KnownFact]) -> Answer:
    said = [f for f in facts if f.subject_id is None and _NAME_SAID.match(f.text)]
    if not said:  # a name given since has closed the older one (the "name" slot)
        return Answer(text=_NO_NAME, fact_ids=[])
    return Answer(text=_quoted(said[-1].text), fact_ids=[said[-1].id])


def known_instead(
    question: str, facts: list[KnownFact], names: list[str] | None = None
) -> Answer | None:
    """A question of a known shape about one person whose facts say nothing of it: that it
    is not known, and what is ("I don't know that yet. What I know about Tom: ...")."""
    asked = _asked(question, facts, names)
    if asked is None or asked[1] or len({f.subject_id for f in asked[0]}) != 1:
        return None
    about = asked[0]
    who = about[0].subject_name or "you"
    texts = list(dict.fromkeys(_quoted(f.text) for f in about))
    text = f"I don't know that yet. What I know about {who}: {' '.join(texts)}"
    return Answer(text=text, fact_ids=[f.id for f in about])


def all_known(facts: list[KnownFact], names: list[str]) -> Answer | None:
    """For a question about one person no shape of ours reads ("what is Bernd's phone
    number?"): that it is not known for sure, and all that is. A weak model answered such
    questions by echoing the chat ("Noted.")."""
    for name in names:
        about = [f for f in facts if _is_about(f, _fold(name))]
        if about and len({f.subject_id for f in about}) == 1:
            who = about[0].subject_name or "you"
            texts = list(dict.fromkeys(_quoted(f.text) for f in about))
            text = f"I'm not sure. What I know about {who}: {' '.join(texts)}"
            return Answer(text=text, fact_ids=[f.id for f in about])
    return None


def _asked(
    question: str, facts: list[KnownFact], names: list[str] | None
) -> tuple[list[KnownFact], list[KnownFact], bool] | None:
    """For a question of a known shape: the facts about whom it asks, those of them that
    answer it, and whether several answers may stand together."""
    for asked, says, many in (*_SHAPES, *_KNOWN_ONLY_SHAPES):
        match = asked.match(question.strip())
        if match is None:
            continue
        who = _fold(match["who"])
        inside = [_fold(n) for n in names or [] if f" {_fold(n)} " in f" {who} "]
        who = inside[0] if len(inside) == 1 else who
        about = [f for f in facts if _is_about(f, who)]
        hits = [f for f in about if says.search(f.text) and not _NEGATED.search(f.text)]
        if "parent" in match.groupdict():  # "who is luca's father?": not his mother Anna
            gender = TIER_RELATIONS[match["parent"].casefold()].gender  # None: "parents"
            hits = [f for f in hits if gender is None or _parent_gender(f.text) in (None, gender)]
        return about, hits, many
    return None


_PARENT_IN_FACT = re.compile(r"\bof the user's (?P<relation>\w+)(?: (?P<name>[A-Z][\w-]*))?")


def _parent_gender(text: str) -> str | None:
    """The gender of the parent "... of the user's sister Anna" names, when told."""
    match = _PARENT_IN_FACT.search(text)
    if match is None:
        return None
    relation = TIER_RELATIONS.get(match["relation"])
    if relation is not None and relation.gender is not None:
        return relation.gender
    return name_gender(match["name"]) if match["name"] else None


def _everything_about(who: str, facts: list[KnownFact], names: list[str] | None) -> Answer | None:
    group = GROUPS.get(who)
    inside = [_fold(n) for n in names or [] if f" {_fold(n)} " in f" {who} "]
    who = inside[0] if len(inside) == 1 and group is None else who
    hits = [f for f in facts if (f.subject_role in group if group else _is_about(f, who))]
    if not hits or (group is None and len({f.subject_id for f in hits}) > 1):
        return None  # nothing known, or two people of that name
    texts = list(dict.fromkeys(_quoted(f.text) for f in hits))
    return Answer(text=" ".join(texts), fact_ids=[f.id for f in hits])


def told_back(texts: list[str]) -> str:
    """A statement's facts as the reply that confirms them ("Noted: Anna lives in Berlin.");
    "Noted." when none were read; an introduction is greeted ("Nice to meet you, Sam!")."""
    named = _NAME_SAID_AS.match(texts[0]) if len(texts) == 1 else None
    if named is not None:
        return f"Nice to meet you, {named['name']}! I'll remember your name."
    return " ".join(["Noted:" if texts else "Noted.", *dict.fromkeys(_quoted(t) for t in texts)])


def _quoted(text: str) -> str:
    said = to_you(text.strip().rstrip("."))
    return said[:1].upper() + said[1:] + "."


def _is_about(fact: KnownFact, who: str) -> bool:
    """``who`` as the question says it: "me", a name, or "my sister" (whoever has that
    role; two such people make two subjects, which no answer quotes)."""
    if who in ("i", "me"):
        return fact.subject_id is None
    mine, _, word = who.partition(" ")
    relation = TIER_RELATIONS.get(word) if mine in ("my", "our") else None
    if relation is not None:
        if fact.subject_id is None or fact.subject_role != relation.role:
            return False
        # "my brother" is not the sister Anna: a name of the other gender rules her out
        said = name_gender(fact.subject_name or "")
        return relation.gender is None or said is None or said == relation.gender
    return fact.subject_name is not None and _fold(fact.subject_name) == who
