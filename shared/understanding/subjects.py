"""Who a clause is about: the user, a person the message names, or (abstain) unknown.

"she" in "My sister Anna lives in Berlin and she loves climbing" is Anna: a third-person
pronoun is read as the one person named before it whose gender the message does not
contradict; with two such people, or none, the clause has no subject the rules can vouch for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.conversation.relations import TIER_RELATIONS
from shared.understanding.lexicon import PRONOUN_GENDER, SELF_SUBJECTS
from shared.understanding.people import Found
from shared.understanding.result import PersonMention

if TYPE_CHECKING:
    from spacy.tokens import Token

USER = "user"
_SUBJECT_DEPS = ("nsubj", "nsubjpass")


@dataclass(frozen=True)
class Subject:
    about: str  # "user" or the mention as written
    display: str  # how a fact's sentence names it: "The user", "Anna", "my boss"


def subject_token(predicate: Token) -> Token | None:
    """The grammatical subject of ``predicate``: its own, its head's when the parser made it
    an auxiliary or a complement, or the first conjunct's ("Anna lives here and loves ...")."""
    token: Token | None = predicate
    for _ in range(4):
        if token is None:
            return None
        own = next((c for c in token.children if c.dep_ in _SUBJECT_DEPS), None)
        if own is not None:
            return own
        if (
            token.dep_ in ("aux", "auxpass", "xcomp", "acomp", "conj", "attr")
            and token.head != token
        ):
            token = token.head
        else:
            return None
    return None


def subject_of(token: Token, found: Found) -> Subject | None:
    """None when the rules cannot vouch for one subject ("Anna and Tom", "my parents")."""
    if token.i in found.shared or any(c.dep_ == "conj" for c in token.children):
        return None
    named = {found.by_token[t.i].name for t in token.subtree if t.i in found.by_token}
    named &= {m.name for m in found.mentions if m.named}
    if len(named) > 1:
        return None  # "my friend Anna's son Max": whose clause it is needs a better parse
    if token.lower_ in SELF_SUBJECTS:
        return Subject(USER, "The user")
    mention = found.by_token.get(token.i)
    if mention is not None:
        return mention_subject(mention)
    gender = PRONOUN_GENDER.get(token.lower_)
    if gender is not None:
        earlier = {found.by_token[i].name: found.by_token[i] for i in found.by_token if i < token.i}
        fits = [m for m in earlier.values() if m.named and gender_of(m) in (None, gender)]
        if len(fits) == 1:
            return mention_subject(fits[0])
    return None


def each_subject(predicate: Token, token: Token, found: Found) -> list[Subject]:
    """The people of a plural subject, each: "my son Leo and his wife Sara live in Bern",
    "Anna and I live in Bern"; empty unless the verb is plural, the subject joins them with
    "and", and each is a named person of the message (or the user)."""
    if predicate.tag_ != "VBP" or not any(t.lower_ == "and" for t in token.subtree):
        return []
    named = {found.by_token[t.i].name for t in token.subtree if t.i in found.by_token}
    people = [mention_subject(m) for m in found.mentions if m.named and m.name in named]
    if any(t.lower_ in SELF_SUBJECTS for t in token.subtree):
        people.append(Subject(USER, "The user"))
    words = {t.i for t in token.subtree if t.pos_ in ("NOUN", "PROPN", "PRON")}
    unplaced = (
        words - set(found.by_token) - {t.i for t in token.subtree if t.lower_ in SELF_SUBJECTS}
    )
    if len(people) < 2 or any(token.doc[i].pos_ == "PROPN" for i in unplaced):
        return []  # a name no rule placed: who it is needs the model
    return people


def mention_subject(mention: PersonMention) -> Subject:
    if mention.named:
        return Subject(mention.name, mention.name)
    # Unnamed mentions are the user's relations ("my boss"): people.find_people adds no other.
    return Subject(mention.name, f"The user's {mention.name.partition(' ')[2]}")


def gender_of(mention: PersonMention) -> str | None:
    """The gender the relation word says ("sister": f), or None."""
    if mention.relation is None:
        return None
    word = TIER_RELATIONS.get(mention.relation.split()[-1])
    return word.gender if word else None
