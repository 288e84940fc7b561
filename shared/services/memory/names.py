"""How people are referred to: names, nicknames, pronouns, relation words ("my boss").

Pure functions over small tables; entity resolution builds on them. The relation words are
``shared.conversation.relations`` (one table with the understanding tier).
"""

from __future__ import annotations

from shared.conversation.relations import RELATIONS, Relation
from shared.conversation.text import fold, fold_keeping_accents

SELF_WORDS = frozenset({"user", "the user", "me", "i", "myself", "self", "ich", "mich", "mir"})
PRONOUNS = frozenset(
    {"he", "she", "they", "him", "her", "them", "his", "hers", "it", "this person",
     "that person", "someone", "somebody", "er", "sie", "ihn", "ihm", "ihr", "jemand"}
)  # fmt: skip
_POSSESSIVES = ("my ", "our ", "mein ", "meine ", "meinem ", "meiner ", "unser ", "unsere ")
_DETERMINERS = ("the ", "a ", "an ", "his ", "her ", "their ", "der ", "die ", "das ")


# Diminutives and short forms: names in one group may be the same person.
# Only true diminutives: a name that is also given on its own (Klaus, Lena, Sandra) would
# tie two different people together.
_NICKNAME_GROUPS: tuple[tuple[str, ...], ...] = (
    ("thomas", "tom", "tommy", "thomi"),
    ("elisabeth", "elizabeth", "lisi", "liesl", "lisbeth", "liz", "lizzy", "betty", "sissi"),
    ("william", "will", "bill", "billy"),
    ("robert", "rob", "bob", "bobby", "robbie"),
    ("richard", "rick", "ricky", "richie"),
    ("katharina", "katherine", "catherine", "kathi", "kati", "kate", "katie", "cathy", "käthe"),
    ("alexander", "alex", "xander"),
    ("alexandra", "alex"),
    ("johannes", "johann", "hannes"),
    ("john", "johnny"),
    ("michael", "mike", "micha", "michi"),
    ("christopher", "christoph", "chris"),
    ("christina", "christine", "chris", "chrissy"),
    ("daniel", "dani", "dan", "danny"),
    ("matthias", "matthew", "matt", "matze", "hias"),
    ("andreas", "andrew", "andi", "andy"),
    ("stefan", "stephan", "steven", "stephen", "steve"),
    ("stefanie", "stephanie", "steffi", "steph"),
    ("josef", "joseph", "sepp", "seppi", "joe", "joey"),
    ("margarete", "margaret", "maggie", "meg", "gretel"),
    ("barbara", "babs", "bärbel"),
    ("susanne", "susan", "susi", "sue"),
    ("franziska", "franzi", "fränzi"),
    ("sebastian", "basti", "seb"),
    ("benjamin", "ben", "benji", "benny"),
    ("maximilian", "max", "maxi"),
    ("nikolaus", "nicholas", "nick", "niki"),
    ("florian", "flo"),
    ("patrick", "pat", "paddy"),
    ("patricia", "pat", "patty"),
    ("jennifer", "jen", "jenny"),
    ("rebecca", "becky", "becca"),
    ("samuel", "sam", "sammy"),
    ("samantha", "sam", "sammy"),
    ("edward", "ed", "eddie", "ted"),
    ("theodor", "theodore", "theo", "ted"),
    ("james", "jim", "jimmy", "jamie"),
    ("charles", "charlie"),
    ("anton", "anthony", "toni", "tony"),
    ("antonia", "toni"),
    ("gabriele", "gabriela", "gabi", "gaby"),
    ("wolfgang", "wolfi"),
    ("friedrich", "frederick", "fritz", "freddy"),
    ("heinrich", "heinz", "heiri"),
    ("ulrich", "uli", "ueli"),
    ("dominik", "dominic", "domi"),
    ("magdalena", "magda"),
    ("jakob", "jacob", "köbi"),
)
NICKNAMES: dict[str, frozenset[int]] = {}
for _index, _group in enumerate(_NICKNAME_GROUPS):
    for _name in _group:
        NICKNAMES[_name] = NICKNAMES.get(_name, frozenset()) | {_index}


def is_self(name: str) -> bool:
    return fold_keeping_accents(name) in SELF_WORDS


def is_pronoun(name: str) -> bool:
    return fold_keeping_accents(name) in PRONOUNS


def relation_of(phrase: str) -> Relation | None:
    """The relation a word or phrase names for the user: "my boss", "Mum", "our dog".

    A relation of someone else ("my wife's colleague", "his sister") is not the user's: None.
    """
    text = fold_keeping_accents(phrase)
    if is_indirect(text):
        return None
    for prefix in (*_POSSESSIVES, "the "):
        if text.startswith(prefix):
            text = text.removeprefix(prefix)
            break
    return RELATIONS.get(text)


def is_indirect(phrase: str) -> bool:
    """A relation through someone else: "my wife's colleague", "his sister", "Anna's son"."""
    text = fold_keeping_accents(phrase)
    return "'s " in text or "’s " in text or text.startswith(("his ", "her ", "their "))


# Relatives a user has one of (canonical relation words): said without a name ("my mom"),
# they are still someone to keep facts about.
ONE_OF_A_KIND = frozenset({"mother", "father", "wife", "husband"})


def called_by(phrase: str) -> str:
    """How a relative known by the relation is shown: "my mom" -> "Mom"."""
    text = phrase.strip()
    for prefix in _POSSESSIVES:
        if text.casefold().startswith(prefix):
            text = text[len(prefix) :]
            break
    return text[:1].upper() + text[1:]


def is_proper_name(name: str) -> bool:
    """A name ("Thomas", "Dr. Weber"), not a description ("my boss", "the plumber", "he")."""
    text = fold_keeping_accents(name)
    if not text or is_self(text) or is_pronoun(text) or relation_of(text) is not None:
        return False
    return not text.startswith(_POSSESSIVES + _DETERMINERS) and not is_indirect(text)


def nickname_match(a: str, b: str) -> bool:
    groups_a = NICKNAMES.get(fold_keeping_accents(a)) or NICKNAMES.get(fold(a), frozenset())
    groups_b = NICKNAMES.get(fold_keeping_accents(b)) or NICKNAMES.get(fold(b), frozenset())
    return bool(groups_a & groups_b)


def edit_distance(a: str, b: str, limit: int = 3) -> int:
    """Levenshtein distance, giving up (returning ``limit``) once it cannot be below it."""
    if abs(len(a) - len(b)) >= limit:
        return limit
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        if min(current) >= limit:
            return limit
        previous = current
    return min(previous[-1], limit)
