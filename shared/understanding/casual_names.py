"""People as they are typed in passing: "my friend nadia" (a lowercase name right after the
relation word), "a rabbit called biscuit" (whatever follows "called" or "named"), "Kim from
accounting" (a colleague); and capitalised words that are not people ("the Matterhorn",
"Morning routines ..."), which a guess must not take for one.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from shared.understanding.first_names import is_first_name
from shared.understanding.result import PersonMention

if TYPE_CHECKING:
    from spacy.tokens import Token

NAMING_VERBS = frozenset({"name", "call"})
OWNING_VERBS = frozenset({"have", "get", "adopt", "buy", "rescue"})  # "we adopted a rabbit"
_IN_LAW = ("-", "in", "-", "law")
_NAME_DEPS = frozenset({"oprd", "dobj", "attr", "xcomp", "npadvmod", "appos", "nsubj"})
# Where a word stands as a name would: a noun ("my friend hope is ..."), never a verb,
# a modal or a function word ("my friend will call", "my sister may come").
_NOMINAL_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "JJ"})
_DATES = frozenset({"DATE", "TIME", "MONEY", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT"})
# Where "X from accounting" or "X in finance" works: a colleague of the user.
DEPARTMENTS = frozenset(
    {"accounting", "accounts", "finance", "sales", "marketing", "hr", "it", "legal",
     "engineering", "support", "procurement", "payroll", "operations", "design", "product",
     "work", "the office", "my team", "our team", "the team"}
)  # fmt: skip


def lowercase_name(noun: Token) -> Token | None:
    """The name right after a relation word that the usual rules miss: lowercase and joined
    to it ("my friend nadia": a proper noun, or a person to the recognizer), or a name that
    is also a word ("my colleague Will")."""
    doc = noun.doc
    if noun.i + 1 >= len(doc):
        return None
    name = doc[noun.i + 1]
    if name.is_title and name.ent_type_ == "PERSON" and name.is_alpha:
        return name  # "my colleague Will is ...": tagged a verb, recognized as a person
    joined = name.head.i == noun.i or noun.head.i == name.i
    proper = name.pos_ == "PROPN" or name.ent_type_ == "PERSON"
    if name.is_lower and name.is_alpha and joined and proper and name.ent_type_ not in _DATES:
        return name
    if (
        name.is_lower
        and name.is_alpha
        and joined
        and name.tag_ in _NOMINAL_TAGS
        and not name.is_stop
        and unknown_word(name.lower_)
        and unknown_word(name.lemma_.lower())
    ):
        return name  # "my friend ravi visited us": no English word, so a name
    return name if known_lowercase_name(name) else None


def known_lowercase_name(token: Token) -> bool:
    """A lowercase word where a name stands that is a known first name (first_names.py):
    "my niece lily", "a friend of mine, pablo"; not "my friend will", "my son may"."""
    return (
        token.is_lower
        and token.is_alpha
        and not token.is_stop
        and token.tag_ in _NOMINAL_TAGS
        and token.ent_type_ not in _DATES
        and is_first_name(token.text)
    )


# A lowercase name said in passing stands where a person does: the one who does something
# ("lena is moving"), whose thing it is ("jonas's job"), with or to whom ("coffee with
# priya", "talked to jonas"); never where a place does ("lives in sofia").
_LONE_NAME_DEPS = frozenset({"nsubj", "nsubjpass", "poss", "appos", "attr"})
# "met jonas", "called priya": whom; "I love sushi" is what (an object otherwise is a thing)
_MEETING = frozenset(
    {"meet", "see", "call", "phone", "text", "visit", "ask", "tell", "invite", "hug", "email",
     "message", "thank", "help", "miss", "marry", "date"}
)  # fmt: skip
_WITH_WHOM = frozenset({"with", "to", "about", "for"})
_GOING = frozenset({"move", "go", "fly", "travel", "relocate", "drive", "come", "return", "head"})
_NAME_TAGS = frozenset({"NNP", "NNPS", "NN", "NNS"})


def lone_lowercase_name(token: Token) -> bool:
    """A name typed in lower case with no relation word before it ("had coffee with priya",
    "does oliver have a dog?"): a proper noun or a person to the recognizer, or a known first
    name that is no common word (``common_word``), where a person stands."""
    if not _maybe_lowercase_name(token):
        return False
    recognised = token.ent_type_ == "PERSON" or token.tag_ in ("NNP", "NNPS")
    with_whom = token.dep_ == "pobj" and token.head.lower_ in _WITH_WHOM
    unknown = (
        with_whom
        and token.tag_ in ("NN", "NNP")  # a name is one, never "groceries"
        and unknown_word(token.lower_)
        and unknown_word(token.lemma_.lower())
    )
    if not (recognised or unknown or is_first_name(token.text)):
        return False
    return _where_a_person_stands(token, recognised)


def _maybe_lowercase_name(token: Token) -> bool:
    """Lowercase letters, no function word, no date or place, no common word, no thing
    ("fresh basil", "the rose")."""
    if not (token.is_lower and token.is_alpha and len(token) > 1) or token.is_stop:
        return False
    if token.ent_type_ in _DATES or token.ent_type_ in ("GPE", "LOC", "ORG", "NORP", "FAC"):
        return False
    modified = any(c.dep_ in ("det", "amod", "compound", "nummod") for c in token.children)
    return not modified and not common_word(token.lower_)


def _where_a_person_stands(token: Token, recognised: bool) -> bool:
    if token.dep_ == "dobj":
        return token.head.lemma_ in _MEETING
    if token.dep_ == "pobj":
        going = token.head.head.lemma_ in _GOING
        return token.head.lower_ in _WITH_WHOM and not (token.head.lower_ == "to" and going)
    if token.dep_ in _LONE_NAME_DEPS:
        return recognised or token.tag_ in _NAME_TAGS
    # misparsed ("does oliver have": an adverb): a known name right after "does" or "is"
    before = token.doc[token.i - 1] if token.i > 0 else None
    return (
        is_first_name(token.text)
        and before is not None
        and before.lower_ in ("does", "did", "is", "was", "has", "will", "can")
    )


def common_word(word: str) -> bool:
    """A verb, adjective or adverb to WordNet (the lemmatizer's index in spaCy's English
    pipeline): "will", "hope", "grace", "mark" are names too, but typed in lower case more
    often the word."""
    return word in _common_words()


def unknown_word(word: str) -> bool:
    """No English word WordNet knows in any part of speech (nor an inflection of one): where
    a name stands ("my friend ravi"), a name."""
    return word not in _words("noun", "verb", "adj", "adv") and word.rstrip("s") not in _words(
        "noun", "verb"
    )


@lru_cache(maxsize=1)
def _common_words() -> frozenset[str]:
    return _words("verb", "adj", "adv")


@lru_cache(maxsize=4)
def _words(*kinds: str) -> frozenset[str]:
    from shared.understanding.nlp import pipeline

    index = pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")  # type: ignore[attr-defined]
    return frozenset(word for kind in kinds for word in index[kind])


def named_by(verb: Token) -> list[Token]:
    """What "called" or "named" gives a name to, however it is written ("called biscuit")."""
    if verb.lemma_ not in NAMING_VERBS:
        return []
    return [
        child
        for child in verb.children
        if child.dep_ in _NAME_DEPS
        and child.i > verb.i
        and child.is_alpha
        # "named kavya": the tagger may call an unknown lowercase name a verb
        and (child.pos_ in ("PROPN", "NOUN") or child.ent_type_ == "PERSON")
        and child.ent_type_ not in _DATES
    ]


def in_law(token: Token) -> bool:
    """The first word of "sister-in-law", which the tokenizer splits in five."""
    doc = token.doc
    following = tuple(t.lower_ for t in doc[token.i + 1 : token.i + 5])
    return following == _IN_LAW and token.lower_ in {
        "mother", "father", "sister", "brother", "son", "daughter"
    }  # fmt: skip


def as_written(text: str) -> str:
    """A name typed in lowercase, as a name is written: "nadia" -> "Nadia"."""
    return text.title() if text.islower() else text


def department_of(token: Token) -> str | None:
    """ "Kim from accounting", "Tom in finance": the department that makes Kim a colleague
    (the "from" right after the name, whatever the parse hangs it on: "met Sara from legal")."""
    doc = token.doc
    following = [doc[token.i + 1]] if token.i + 1 < len(doc) else []
    for prep in [*token.children, *following]:
        if prep.dep_ != "prep" or prep.lower_ not in ("from", "in", "at"):
            continue
        for obj in prep.children:
            if obj.dep_ != "pobj" or (prep not in token.children and prep.i != token.i + 1):
                continue
            owner = [c.lower_ for c in obj.children if c.dep_ in ("poss", "det")]
            phrase = " ".join([*owner, obj.lower_])
            if obj.lower_ in DEPARTMENTS or phrase in DEPARTMENTS:
                return f"from {phrase}"
    return None


def not_a_person(token: Token) -> bool:
    """A capitalised word no rule placed that is no one: after "the" ("the Matterhorn"),
    or a sentence's first word that is not its subject ("Morning routines that work?",
    "Limit my screen time")."""
    if any(c.dep_ == "det" and c.lower_ == "the" for c in token.children):
        return True
    if token.i > 0 and token.nbor(-1).lower_ == "the":
        return True
    return bool(token.is_sent_start) and token.dep_ not in ("nsubj", "nsubjpass", "poss")


def at_work(name: str, token: Token) -> PersonMention:
    """A named person; a colleague when said to be from a department ("Kim from sales")."""
    department = department_of(token)
    if department is None:
        return PersonMention(name=name)
    return PersonMention(name=name, role="colleague", relation=f"colleague {department}")
