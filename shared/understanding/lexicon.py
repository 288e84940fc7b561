"""The English words the tier's rules read: relation nouns, titles, hedges, currencies.

Relation nouns are not here: they are the fact system's own table
(``shared.conversation.relations.TIER_RELATIONS``), so the tier and the resolver give a
word the same role.
"""

from __future__ import annotations

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
PRONOUN_GENDER = {"she": "f", "her": "f", "he": "m", "him": "m", "his": "m"}

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
