"""What a sentence's form allows it to be, read from spaCy's parse: a request, a question,
something the user tells about themselves or others, or something said to the assistant
(``form_of``), and which labels each form allows (``ALLOWED``); whether a text is English.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from shared.understanding.plain import told
from shared.understanding.result import LABELS, Label

if TYPE_CHECKING:  # spaCy loads with the pipeline, on first use (nlp.py)
    from spacy.tokens import Doc, Token

_POLITE = re.compile(r"^(?:please\s+)?(?:can|could|would|will) you\b", re.IGNORECASE)
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
_OTHERS = ("de", "fr", "it", "es", "pt", "nl")  # languages whose text must not be read as English
Form = Literal[
    "request", "question", "to_assistant", "about_self", "told", "about_others",
    "about_assistant", "other",
]  # fmt: skip
# A question is no statement, a request neither a statement nor a question; a sentence
# about someone else ("my colleague is ill") asks the assistant for nothing.
ALLOWED: dict[Form, frozenset[Label]] = {
    "request": frozenset(LABELS) - {"statement", "person_question"},
    "question": frozenset(LABELS) - {"statement"},
    # "how do you spend your spare time": asks the assistant about itself, never a job
    "to_assistant": frozenset({"feedback", "greeting", "thanks", "research", "person_question"}),
    "about_self": frozenset(LABELS) - {"person_question", "greeting"},
    # what the user did, in the past ("we had sushi for dinner"): told, never a question
    "told": frozenset(LABELS) - {"person_question", "greeting", "research"},
    "about_others": frozenset({"statement", "feedback", "greeting", "thanks"}),
    "about_assistant": frozenset({"feedback", "greeting", "thanks"}),
    "other": frozenset(LABELS),
}


def words_of(doc: Doc) -> set[str]:
    return {t.lower_ for t in doc} | {t.lemma_.lower() for t in doc}


def first_verb(doc: Doc) -> str:
    """The verb a request starts with, after "please" or "can you"."""
    verb = next((t for t in doc if t.pos_ == "VERB" and t.lower_ not in ("can", "could")), None)
    return verb.lemma_.lower() if verb is not None else ""


def _perfect(verb: Token) -> bool:
    """The present perfect: "have been", "'ve visited", "ive seen" typed without the
    apostrophe."""
    return verb.tag_ == "VBN" and any(
        c.dep_ == "aux" and (c.lemma_ == "have" or c.lower_ in ("'ve", "’ve", "ve"))
        for c in verb.children
    )


def is_english(doc: Doc) -> bool:
    """No more function words of the languages we see most than of English ("Meine
    Schwester wohnt in Berlin" is German; "Ben's wife Olivia loves gardening" has none)."""
    words = [t.lower_ for t in doc if t.is_alpha]
    if len(words) <= 2:  # "Ciao bella", "Danke schön": a greeting, not read as English
        return _says_what_i_am(doc)
    letters = [ch for ch in doc.text if ch.isalpha()]
    if sum(ch.isascii() or "À" <= ch <= "ɏ" for ch in letters) * 2 < len(letters):
        return False  # another script (Cyrillic, Arabic, Han...): not English
    owners = {t.nbor(-1).lower_ for t in doc[1:] if t.lower_ in ("'s", "’s")}  # "Ben's"
    words = [word for word in words if word not in owners]
    english, foreign = _function_words()
    said_i = sum(t.text == "I" for t in doc)  # the English pronoun, never Italian's "i"
    return sum(w in foreign for w in words) <= sum(w in english for w in words) + said_i


# How one is at the moment, said in passing: not worth keeping as a fact about the user.
_PASSING = frozenset(
    {"back", "here", "there", "fine", "ok", "okay", "good", "great", "done", "ready", "sorry",
     "home", "tired", "busy", "bored", "confused", "lost", "serious", "kidding", "joking",
     "sure", "in", "out", "off", "on", "late", "awake", "up", "ill", "sick", "hungry"}
)  # fmt: skip


def _says_what_i_am(doc: Doc) -> bool:
    """ "I'm vegetarian", "I am diabetic": two words that are English and tell something to
    keep; "I'm back" is said in passing."""
    words = [t.lower_ for t in doc if not t.is_punct]
    return (
        len(words) == 3
        and words[0] == "i"
        and words[1] in ("'m", "’m", "am", "m")
        and words[2].isalpha()
        and words[2] not in _PASSING
    )


@lru_cache(maxsize=1)
def _function_words() -> tuple[frozenset[str], frozenset[str]]:
    """English's and the other languages' stop words, each without the ones they share."""
    from importlib import import_module

    english = frozenset(import_module("spacy.lang.en.stop_words").STOP_WORDS)
    others = frozenset().union(
        *(import_module(f"spacy.lang.{code}.stop_words").STOP_WORDS for code in _OTHERS)
    )
    return english - others, others - english


# What the user asks the assistant to know or recall is a question of theirs, not of it.
_KNOWING = frozenset({"know", "remember", "recall", "have", "see", "think", "need", "mind"})


def _asks_the_assistant(doc: Doc) -> bool:
    """A question whose subject is "you", about the assistant's own doing ("how do you spend
    your spare time", "what do you like"), not a polite request nor what it knows."""
    root = next((t for t in doc if t.dep_ == "ROOT"), doc[0])
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None or subject.lower_ != "you" or root.lemma_ in _KNOWING:
        return False
    return not any(t.lower_ in ("my", "me", "i", "mine", "our", "us") for t in doc)


def form_of(doc: Doc) -> Form:
    """What the sentence's form allows it to be (``ALLOWED``)."""
    text = doc.text.strip()
    first = doc[0]
    if any(t.lower_ == "you" and t.dep_ == "nsubj" and t.head.tag_ == "VBD" for t in doc):
        return "about_assistant"  # "you got the date wrong", "how you handled it"
    if (
        _POLITE.match(text)
        or (first.tag_ == "VB" and first.dep_ == "ROOT")
        or first.lower_ == "please"
    ):
        return "request"
    inverted = first.pos_ == "AUX" and len(doc) > 1 and doc[1].dep_ in ("nsubj", "expl")
    if text.endswith("?") or first.tag_ in _WH_TAGS or inverted:
        return "to_assistant" if _asks_the_assistant(doc) else "question"
    root = next((t for t in doc if t.dep_ == "ROOT"), first)
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None:
        # "finally finished my thesis": the user's "I" left out, in the past tense
        return "told" if root.tag_ == "VBD" and root.i <= 1 and told(doc) else "other"
    if subject.lower_ in ("i", "we"):
        done = root.tag_ == "VBD" or _perfect(root)  # "we had sushi", "i've been to lisbon"
        return "told" if done and told(doc) else "about_self"
    return "about_others"
