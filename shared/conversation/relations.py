"""Relation words: what "my sister", "Mum" or "our dog" say a person is to the user.

One table for the fact system's resolver (``shared.services.memory.names``, which reads
the mentions a model writes, in English or German) and for the understanding tier
(``shared.understanding``, which reads the user's English messages: the words marked
``tier``, plurals included, so "my sisters Anna and Eva" are both siblings). "My boss" is
a colleague, "our dog" a pet, a grandparent, aunt or neighbour ``other``.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.models.memory import PersonRole


@dataclass(frozen=True)
class Relation:
    """A relation word's meaning: the role it implies and, if it says, a gender."""

    word: str  # canonical: "mother" for mum, mom, Mutter
    role: PersonRole
    gender: str | None = None
    generic: bool = False  # "my partner", "my colleague": names the role itself
    # Read by the understanding tier in messages: English, and a person more often than a
    # thing when written by the user ("my report" is usually a document).
    tier: bool = True


def _rel(
    role: PersonRole,
    gender: str | None,
    words: str,
    *,
    german: str = "",
    other: str = "",
    generic: bool = False,
) -> dict[str, Relation]:
    """``words``: English, the first canonical; ``german`` and ``other``: not for the tier."""
    english = words.split()
    meaning = Relation(english[0], role, gender, generic)
    table = dict.fromkeys(english, meaning)
    hidden = Relation(english[0], role, gender, generic, tier=False)
    return {**table, **dict.fromkeys((german + " " + other).split(), hidden)}


RELATIONS: dict[str, Relation] = {
    **_rel("partner", None, "partner partners spouse fiancé fiancée fiance", generic=True),
    **_rel("partner", "f", "wife girlfriend", german="frau ehefrau"),
    **_rel("partner", "m", "husband boyfriend", german="mann ehemann"),
    **_rel("child", None, "child children kid kids", german="kind", generic=True),
    **_rel("child", "m", "son sons stepson", german="sohn"),
    **_rel("child", "f", "daughter daughters stepdaughter", german="tochter"),
    **_rel("parent", None, "parent parents", generic=True),
    **_rel("parent", "f", "mother mom mum mama stepmother stepmom stepmum", german="mutter"),
    **_rel("parent", "m", "father dad papa stepfather stepdad", german="vater"),
    **_rel("sibling", None, "sibling siblings", generic=True),
    **_rel("sibling", "f", "sister sisters stepsister half-sister", german="schwester"),
    **_rel("sibling", "m", "brother brothers stepbrother half-brother", german="bruder"),
    **_rel("friend", None, "friend friends buddy", german="freund freundin", generic=True),
    "best friend": Relation("friend", "friend", None, generic=True, tier=False),  # a phrase
    **_rel(
        "colleague",
        None,
        "colleague colleagues coworker coworkers co-worker teammate",
        german="kollege kollegin",
        generic=True,
    ),
    **_rel("colleague", None, "boss manager supervisor", german="chef chefin"),
    **_rel("colleague", None, "employee", other="assistant report"),
    **_rel("pet", None, "pet", german="haustier", generic=True),
    **_rel("pet", None, "dog dogs puppy", german="hund"),
    **_rel("pet", None, "cat cats kitten", german="katze"),
    **_rel("pet", None, "horse", german="pferd"),
    **_rel("pet", None, "rabbit bunny hamster parrot bird"),
    **_rel("service_provider", None, "doctor dentist physician", german="arzt ärztin"),
    **_rel("service_provider", None, "lawyer attorney", german="anwalt"),
    **_rel(
        "service_provider",
        None,
        "plumber electrician cleaner hairdresser therapist trainer nanny babysitter "
        "accountant landlord teacher tutor coach instructor vet physio physiotherapist "
        "mechanic landlady",
    ),
    **_rel("other", "f", "grandmother grandma granny", german="oma"),
    **_rel("other", "m", "grandfather grandpa", german="opa"),
    **_rel("other", "f", "aunt", german="tante"),
    **_rel("other", "m", "uncle", german="onkel"),
    **_rel("other", None, "cousin cousins"),
    **_rel("other", "f", "granddaughter godmother goddaughter", german="enkelin"),
    **_rel("other", "m", "grandson godfather godson", german="enkel"),
    **_rel("other", None, "grandchild grandkid grandchildren grandkids godchild"),
    **_rel("other", None, "roommate flatmate housemate mentor"),
    **_rel("other", "f", "niece", german="nichte"),
    **_rel("other", "m", "nephew", german="neffe"),
    **_rel("other", None, "neighbour neighbor", german="nachbar nachbarin"),
    **_rel(
        "other",
        None,
        "mother-in-law father-in-law sister-in-law brother-in-law son-in-law "
        "daughter-in-law in-law in-laws",
    ),
}
# The words the understanding tier reads in a message.
TIER_RELATIONS: dict[str, Relation] = {w: r for w, r in RELATIONS.items() if r.tier}
