"""Relation words: what "my sister", "Mum" or "our dog" say a person is to the user.

One table for the fact system's resolver (``shared.services.memory.names``, which reads
the mentions a model writes, in English or German) and for the understanding tier
(``shared.understanding``, which reads the user's English messages: the words marked
``tier``, plurals included, so "my sisters Anna and Eva" are both siblings). "My boss" is
a colleague, "our dog" a pet, "my nonna" a grandparent, "my stepmother" a parent (the role
a step-relation stands in), a neighbour or godchild ``other``.
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
    **_rel("child", "m", "son sons", german="sohn"),
    **_rel("child", "f", "daughter daughters", german="tochter"),
    **_rel("parent", None, "parent parents", generic=True),
    **_rel("parent", "f", "mother mom mum mama mommy mummy", german="mutter"),
    **_rel("parent", "m", "father dad papa daddy", german="vater"),
    **_rel("sibling", None, "sibling siblings", generic=True),
    **_rel("sibling", "f", "sister sisters half-sister", german="schwester"),
    **_rel("sibling", "m", "brother brothers half-brother", german="bruder"),
    # A step-relation stands in the role it names, but is not the same relative: "my
    # stepmother Carla" is no namesake of "my mother Maria".
    **_rel("child", "m", "stepson stepsons"),
    **_rel("child", "f", "stepdaughter stepdaughters"),
    **_rel("child", None, "stepchild stepchildren stepkid stepkids"),
    **_rel("parent", "f", "stepmother stepmom stepmum stepmothers"),
    **_rel("parent", "m", "stepfather stepdad stepfathers"),
    **_rel("parent", None, "stepparent stepparents"),
    **_rel("sibling", "f", "stepsister stepsisters"),
    **_rel("sibling", "m", "stepbrother stepbrothers"),
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
    **_rel(
        "grandparent",
        "f",
        "grandmother grandmothers grandma grandmas granny gran nan nana nanna nonna grandmom "
        "grandmum abuela",
        german="oma großmutter",
    ),
    **_rel(
        "grandparent",
        "m",
        "grandfather grandfathers grandpa grandpas granddad grandad gramps nonno grandpop abuelo",
        german="opa großvater",
    ),
    **_rel("grandparent", None, "grandparent grandparents", generic=True),
    **_rel("grandchild", "f", "granddaughter granddaughters", german="enkelin"),
    **_rel("grandchild", "m", "grandson grandsons", german="enkel"),
    **_rel("grandchild", None, "grandchild grandkid grandchildren grandkids", generic=True),
    **_rel("aunt_uncle", "f", "aunt aunts auntie aunty", german="tante"),
    **_rel("aunt_uncle", "m", "uncle uncles", german="onkel"),
    **_rel("cousin", None, "cousin cousins", german="cousine"),
    **_rel("niece_nephew", "f", "niece nieces", german="nichte"),
    **_rel("niece_nephew", "m", "nephew nephews", german="neffe"),
    **_rel("other", "f", "godmother goddaughter"),
    **_rel("other", "m", "godfather godson"),
    **_rel("other", None, "godchild"),
    **_rel("other", None, "roommate flatmate housemate mentor"),
    **_rel("other", None, "neighbour neighbor", german="nachbar nachbarin"),
    **_rel("in_law", "f", "mother-in-law", german="schwiegermutter"),
    **_rel("in_law", "m", "father-in-law", german="schwiegervater"),
    **_rel("in_law", "f", "sister-in-law", german="schwägerin"),
    **_rel("in_law", "m", "brother-in-law", german="schwager"),
    **_rel("in_law", "f", "daughter-in-law", german="schwiegertochter"),
    **_rel("in_law", "m", "son-in-law", german="schwiegersohn"),
    **_rel("in_law", None, "in-law in-laws", generic=True),
}
# The words the understanding tier reads in a message.
TIER_RELATIONS: dict[str, Relation] = {w: r for w, r in RELATIONS.items() if r.tier}
