"""Relatives of relatives: "my sister Anna has a son called Luca" makes Luca the user's
nephew, held by Anna.

The people rules give a person held by someone else the role ``other`` and the relation as
said ("sister's son", "anna's son"). When the holder is one of the user's people in the same
message, the two roles compose ("sibling" then "child": ``niece_nephew``), and the facts say
both sides, each about its own person: "Luca is the son of the user's sister Anna" and
"Anna has a son called Luca", so a question about either finds its answer among that
person's facts. A composition the table does not hold (a friend's sister) stays ``other``.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.conversation.relations import TIER_RELATIONS
from shared.models.memory import PersonRole
from shared.understanding.first_names import name_gender
from shared.understanding.lexicon import PRONOUN_GENDER
from shared.understanding.result import PersonMention

# (the holder's role to the user, the person's role to the holder) -> the person's to the
# user: each one of the roles the fact system keeps when said through someone else
# (``THROUGH_OTHERS``)
COMPOSED: dict[tuple[PersonRole, PersonRole], PersonRole] = {
    ("sibling", "child"): "niece_nephew",
    ("child", "child"): "grandchild",
    ("parent", "parent"): "grandparent",
    ("parent", "sibling"): "aunt_uncle",
    ("aunt_uncle", "child"): "cousin",
    ("partner", "parent"): "in_law",
    ("partner", "sibling"): "in_law",
    ("sibling", "partner"): "in_law",
    ("child", "partner"): "in_law",
}


_POSSESSIVE_PRONOUNS = ("his", "her")  # "his wife": whose, by PRONOUN_GENDER


@dataclass(frozen=True)
class Held:
    """A person the message places through one of the user's people."""

    person: PersonMention  # with the composed role
    holder: PersonMention  # one of the user's people ("my wife" when unnamed)
    word: str  # the person's relation to the holder, as said: "son"


def compose(mentions: list[PersonMention]) -> dict[str, Held]:
    """The people held by one of the user's named people, by name."""
    held: dict[str, Held] = {}
    for mention in mentions:
        holder_said, word = _held_as(mention.relation or "")
        if mention.role != "other" or not holder_said or not mention.named:
            continue
        holder = _holder(mentions, holder_said.casefold())
        relation = TIER_RELATIONS.get(word)
        if holder is None or relation is None or holder.role is None:
            continue
        role = COMPOSED.get((holder.role, relation.role))
        if role is not None:
            held[mention.name] = Held(mention.model_copy(update={"role": role}), holder, word)
    return held


def _held_as(relation: str) -> tuple[str, str]:
    """ "anna's son" -> ("anna", "son"); "his wife" -> ("his", "wife"); else ("", "")."""
    holder, _, word = relation.rpartition("'s ")
    if holder:
        return holder, word
    pronoun, _, word = relation.partition(" ")
    return (pronoun, word) if pronoun in _POSSESSIVE_PRONOUNS and word else ("", "")


def _holder(mentions: list[PersonMention], said: str) -> PersonMention | None:
    """The user's person a holder word stands for, if exactly one: "anna" (the name),
    "sister" (the relation), or "his"/"her" (the one of the user's named people whose
    gender, when the relation or the name tells it, fits: "my son Leo and his wife Sara")."""
    mine = [m for m in mentions if m.role not in (None, "other")]
    if said in _POSSESSIVE_PRONOUNS:
        found = [m for m in mine if m.named and _gender(m) in (None, PRONOUN_GENDER[said])]
    else:
        found = [m for m in mine if said in (m.name.casefold(), (m.relation or "").casefold())]
    return found[0] if len(found) == 1 else None


def _gender(mention: PersonMention) -> str | None:
    relation = TIER_RELATIONS.get((mention.relation or "").rsplit(" ", 1)[-1])
    if relation is not None and relation.gender is not None:
        return relation.gender
    return name_gender(mention.name)


def person_side(held: Held) -> str:
    """The fact about the held person: "Luca is the son of the user's sister Anna" ("Maria
    is the mother of the user's wife" when the holder has no name)."""
    holder = held.holder
    named = f" {holder.name}" if holder.named else ""
    return f"{held.person.name} is the {held.word} of the user's {holder.relation}{named}"


def holder_side(held: Held) -> str | None:
    """The fact about the holder: "Anna has a son called Luca"; None for a holder with no
    name (no person of theirs to hold it)."""
    if not held.holder.named:
        return None
    return f"{held.holder.name} has a {held.word} called {held.person.name}"
