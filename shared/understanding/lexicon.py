"""The English words the tier's rules read: relation nouns, hedges, currencies.

Relation nouns map onto the fact system's roles (``shared.models.memory.PersonRole``) as
its resolver reads them: "my boss" is a colleague, "our dog" a pet, a grandparent or an
aunt ``other``. Plurals are listed so "my sisters Anna and Eva" are both siblings.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.models.memory import PersonRole


@dataclass(frozen=True)
class RelationWord:
    role: PersonRole
    gender: str | None  # "f", "m", or None when the word does not say


def _words(role: PersonRole, gender: str | None, words: str) -> dict[str, RelationWord]:
    return dict.fromkeys(words.split(), RelationWord(role, gender))


RELATION_WORDS: dict[str, RelationWord] = {
    **_words("partner", None, "partner partners spouse fiance fiancé fiancée"),
    **_words("partner", "f", "wife girlfriend"),
    **_words("partner", "m", "husband boyfriend"),
    **_words("child", None, "child children kid kids"),
    **_words("child", "m", "son sons stepson"),
    **_words("child", "f", "daughter daughters stepdaughter"),
    **_words("parent", None, "parent parents"),
    **_words("parent", "f", "mother mom mum mama stepmother"),
    **_words("parent", "m", "father dad papa stepfather"),
    **_words("sibling", None, "sibling siblings"),
    **_words("sibling", "f", "sister sisters"),
    **_words("sibling", "m", "brother brothers"),
    **_words("friend", None, "friend friends buddy"),
    **_words("colleague", None, "colleague colleagues coworker coworkers co-worker boss"),
    **_words("colleague", None, "manager supervisor teammate"),
    **_words("pet", None, "pet dog dogs puppy cat cats kitten horse rabbit hamster parrot"),
    **_words("service_provider", None, "doctor dentist physician lawyer plumber therapist"),
    **_words("service_provider", None, "hairdresser accountant landlord nanny babysitter"),
    **_words("other", "f", "grandmother grandma granny aunt niece"),
    **_words("other", "m", "grandfather grandpa uncle nephew"),
    **_words("other", None, "cousin neighbour neighbor"),
}

# Family words used as a title ("Grandma Rosa", "Uncle Tom") name the user's relative.
TITLE_WORDS = frozenset(
    {"grandma", "grandpa", "granny", "uncle", "aunt", "mom", "mum", "dad", "mama", "papa"}
)
# "my best friend", "my older sister": kept in the relation as written.
KEPT_MODIFIERS = frozenset(
    {"best", "older", "younger", "little", "big", "elder", "oldest", "youngest", "twin"}
)
# "my ex-wife", "my late husband": not the role the noun says; left to the model.
DOUBTFUL_MODIFIERS = frozenset({"ex", "former", "late", "future", "dead", "deceased"})
USER_OWNERS = frozenset({"my", "our"})
OTHER_OWNERS = frozenset({"his", "her", "their", "your"})
SELF_SUBJECTS = frozenset({"i"})
PRONOUN_GENDER = {"she": "f", "her": "f", "he": "m", "him": "m"}

# A sentence with one of these (or any modal verb) is not stated as plainly true: no fact
# is taken from it.
HEDGES = frozenset(
    {"if", "maybe", "perhaps", "probably", "wish", "hope", "think", "guess", "suppose",
     "unless", "whether", "imagine", "pretend", "anymore", "longer", "used", "said", "says",
     "told", "tells", "thinks", "believes", "apparently", "want", "wants", "going",
     "planning", "might", "would", "could", "should"}
)  # fmt: skip
NEGATIONS = frozenset({"not", "n't", "no", "never", "nobody", "nothing"})

CURRENCY_WORDS: dict[str, str] = {
    "$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "bucks": "USD",
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "pound": "GBP", "pounds": "GBP",
    "chf": "CHF", "fr": "CHF", "fr.": "CHF", "franc": "CHF", "francs": "CHF",
}  # fmt: skip
