"""Whom "she" or "his" stands for when the message names nobody: the one person the
previous turns of the chat named.

"my grandmother rosa lives in napoli", then "oh wait, she lives in salerno now, not napoli":
the second message names no one, so its "she" is read as Rosa, the one person named in
the newest earlier message that names anyone, when that person's gender (from the relation
word, if one was said) does not contradict the pronoun. Two people who fit, or none, and
the pronoun stays unread: nothing is stored about a guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.conversation.relations import TIER_RELATIONS
from shared.understanding.known_names import with_known
from shared.understanding.lexicon import PRONOUN_GENDER
from shared.understanding.people import Found, find_people
from shared.understanding.result import PersonMention
from shared.understanding.subjects import gender_of

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

MAX_EARLIER = 3  # the user's messages looked back over, newest first


def with_earlier(
    doc: Doc,
    found: Found,
    earlier: tuple[str, ...],
    nlp: Language,
    known: tuple[str, ...] = (),
) -> Found:
    """``found`` with the pronouns of a message that names nobody read as the one person
    named before (``earlier``: the user's previous messages in the chat, oldest first;
    ``known``: the user's people, found in them however typed: "what does maria do?")."""
    pronouns = [t for t in doc if t.lower_ in PRONOUN_GENDER and t.pos_ == "PRON"]
    if not pronouns or any(m.named for m in found.mentions) or found.unplaced or not earlier:
        return found
    genders = {PRONOUN_GENDER[t.lower_] for t in pronouns}
    if len(genders) > 1:
        return found  # "she told him": two people, whoever they are
    for text in list(earlier)[::-1][:MAX_EARLIER]:
        named = _named(nlp(text), known)
        if not named:
            continue
        fits = [m for m in named if gender_of(m) in (None, *genders)]
        people = [m for m in fits if not _an_animal(m)]
        fits = people if len(people) == 1 else fits  # "she has a cat called findus": she
        if len(fits) == 1:
            _add(found, fits[0], pronouns)
        return found  # the newest message that names anyone decides, or nobody does
    return found


def _an_animal(mention: PersonMention) -> bool:
    """A pet, anyone's ("Ingrid's cat Findus"): "she" is the person when one is named too."""
    word = (mention.relation or "").rsplit(" ", 1)[-1]
    relation = TIER_RELATIONS.get(word)
    return mention.role == "pet" or (relation is not None and relation.role == "pet")


def _named(doc: Doc, known: tuple[str, ...]) -> list[PersonMention]:
    earlier = with_known(doc, find_people(doc), known).result(guess=False)
    return [m for m in earlier.mentions if m.named] if earlier.decided else []


def _add(found: Found, mention: PersonMention, pronouns: list[Token]) -> None:
    found.add(mention, pronouns)
