"""What a statement says, kept as it was said: one fact per plain sentence, in the third person.

For a deployment whose extraction model stores junk (``EXTRACTION_READER=understanding``),
the sentences no fact shape reads are still worth remembering as they stand: "I finished the
half marathon in 1:57!" becomes "The user finished the half marathon in 1:57." about the
user, "Anna bought a new bike." stays a fact about Anna. Nothing is paraphrased or inferred,
so nothing is invented; retrieval finds the sentence by its words and its meaning.

A sentence is kept only when it is plainly stated (not a question, a hedge, a negation: the
same test as the shapes) and its main verb has a subject the rules can vouch for: "I" or
"we" (the user) or one person the message names ("she" only when one named person fits).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.models.extraction import ExtractedFact
from shared.understanding.casual_names import as_written
from shared.understanding.clauses import Clause, clauses
from shared.understanding.facts import doubt, without_contrast
from shared.understanding.lexicon import PRONOUN_GENDER
from shared.understanding.people import Found
from shared.understanding.places import place_names
from shared.understanding.subjects import (
    USER,
    Subject,
    gender_of,
    mention_subject,
    subject_of,
    subject_token,
)
from shared.understanding.times import Times

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

MAX_FACT_CHARS = 200
_FIRST_PERSON = {
    "i": "the user", "me": "the user", "my": "the user's", "mine": "the user's",
    "myself": "themself", "we": "the user", "us": "the user", "our": "the user's",
    "ours": "the user's", "ourselves": "themself",
}  # fmt: skip
_SELF = frozenset({"i", "we"})
# "m", "re", "ve": "im", "were", "ive" typed on a phone without the apostrophe.
_THIRD_PERSON_BE = {"am": "is", "'m": "is", "m": "is", "are": "is", "'re": "is", "re": "is",
                    "was": "was", "were": "was"}  # fmt: skip
_THIRD_PERSON_HAVE = {"have": "has", "'ve": "has", "ve": "has"}
# Said of one's health: kept as sensitive, as the extraction model is told to.
_HEALTH = frozenset(
    {"sick", "ill", "surgery", "pregnant", "diagnosed", "cancer", "depression", "therapy",
     "medication", "injury", "injured", "flu", "fever", "pain"}
)  # fmt: skip


def said_facts(sentences: list[Span], found: Found, times: Times) -> list[ExtractedFact]:
    return [fact for sent in sentences for fact in _said(sent, found, times)]


def _said(sent: Span, found: Found, times: Times) -> list[ExtractedFact]:
    """One fact per clause when each stands alone (``clauses.py``), else the sentence whole."""
    sent = without_contrast(sent)
    if len(sent) > 1 and sent[0].lower_ == "and":
        sent = sent[1:]  # "my mum is 70 and she lives in Bern", parsed as two sentences
    if doubt(sent) or not sent.text.strip():
        return []
    root = sent.root
    token = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if token is None or root.pos_ not in ("VERB", "AUX"):
        return []  # a fragment, a greeting, an imperative
    if {t.lower_ for t in sent} & {"you", "your", "yours"}:
        return []  # about the assistant, or a question put as a statement
    subject = _subject(token, found)
    if subject is None:
        return []
    parts = [_clause_fact(clause, subject, found, times) for clause in clauses(sent)]
    if parts and all(part is not None for part in parts):
        return [part for part in parts if part is not None]
    whole = _fact(list(sent), subject, token, found, times)
    return [whole] if whole is not None else []


def _subject(token: Token, found: Found) -> Subject | None:
    return (
        _user_subject(token)
        or subject_of(token, found)
        or _unplaced(token, found)
        or _owner(token, found)
        or _lone_relative(token, found)
    )


def _clause_fact(
    clause: Clause, shared: Subject, found: Found, times: Times
) -> ExtractedFact | None:
    """A clause with its own subject is about that one ("and she is 88": the grandmother);
    one that shares the sentence's is said with its name in front ("Rosa lives in ...")."""
    if clause.subject is None:
        return _fact(clause.tokens, shared, clause.verb, found, times, named=shared.display)
    subject = _subject(clause.subject, found)
    if subject is None:
        return None
    return _fact(clause.tokens, subject, clause.subject, found, times)


def _lone_relative(pronoun: Token, found: Found) -> Subject | None:
    """ "my dad retired and he plays golf": "he" is the unnamed relative named before it, when
    that one is the only person the message names and the relation's gender fits."""
    gender = PRONOUN_GENDER.get(pronoun.lower_)
    if gender is None or len(found.mentions) != 1:
        return None
    [mention] = found.mentions
    before = any(i < pronoun.i and m == mention for i, m in found.by_token.items())
    return mention_subject(mention) if before and gender_of(mention) in (None, gender) else None


def _fact(
    tokens: list[Token],
    subject: Subject,
    token: Token,
    found: Found,
    times: Times,
    named: str | None = None,
) -> ExtractedFact | None:
    text = _third_person(tokens, subject, token, found)
    if named is not None:
        text = f"{named} {text[:1].lower()}{text[1:]}"
    if len(text) > MAX_FACT_CHARS:
        return None
    marker = _time_marker(tokens, times)
    words = {t.lower_ for t in tokens}
    kind = "Allergy" if "allergic" in words else "Health" if words & _HEALTH else "Other"
    return ExtractedFact.model_validate(
        {
            "text": text,
            "type": kind,
            "about": subject.about,
            "confidence": 0.9,
            "sensitivity": "low" if kind == "Other" else "high",
            "temporal_marker": marker,
        }
    )


def _time_marker(tokens: list[Token], times: Times) -> str | None:
    """The clause's day as written ("last Monday"), for the fact system to anchor; a time
    of day is left out ("in 1:57" is a finishing time)."""
    start, end = tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)
    text = tokens[0].doc.text[start:end]
    days = [t.text for t in times.resolved if start <= t.start < end and not t.clock]
    unresolved = [said for said in times.unresolved if said in text]
    return next(iter(days + unresolved), None)


def _unplaced(token: Token, found: Found) -> Subject | None:
    """A lone name no rule placed ("Yusuf is 9"): a person only where the people are
    guessed too (``Found.result(guess=True)``), else the facts are not used at all."""
    name = as_written(token.text)
    return Subject(name, name) if found.lone_name(token) else None


def _owner(token: Token, found: Found) -> Subject | None:
    """Whose thing the subject is, when it is no person: "my new flat" is the user's, "my
    dad's hip operation" the dad's, "Anna's car" Anna's."""
    if token.i in found.by_token:
        return None  # a person the rules could not vouch for: not a thing
    owner = next((c for c in token.children if c.dep_ == "poss"), None)
    if owner is None:
        return None
    if owner.lower_ in ("my", "our"):
        return Subject(USER, "The user")
    return subject_of(owner, found)


def _user_subject(token: Token) -> Subject | None:
    return Subject(USER, "The user") if token.lower_ in _SELF else None


def _third_person(tokens: list[Token], subject: Subject, token: Token, found: Found) -> str:
    """The sentence with the user, and a pronoun standing for the subject, named; a name
    typed in lower case is written as the person is ("my friend nadia" -> "nadia": "Nadia")."""
    words = []
    places = place_names(tokens[0].sent)  # "lives in napoli": Napoli
    for t in tokens:
        word, low = t.text, t.lower_
        person = found.by_token.get(t.i)
        if t.i in places:
            word = places[t.i]
        elif person is not None and t.text.islower() and person.name.lower() == low:
            word = person.name
        elif t.is_lower and found.lone_name(t):
            word = as_written(t.text)  # "lena is moving" -> "Lena is moving"
        elif low in _FIRST_PERSON:
            word = _FIRST_PERSON[low]
        elif t.i == token.i and t.pos_ == "PRON":
            word = subject.display
        elif t.i in _owners(token) and t.pos_ == "PRON" and subject.about != USER:
            word = f"{subject.display}'s"  # "His new flat" -> "Tom's new flat"
        elif _said_of_self(t):
            word = _agree(t)
        elif low in ("'s", "’s") and t.lemma_ == "be" and t.pos_ == "AUX":
            word = "is"  # "he's a chef" -> "Noah is a chef", which the answers read
        if word != t.text and (t.text.startswith("'") or _joined(t)):
            word = f" {word}"  # "I'm", "im" -> "the user is"
        words.append(word + t.whitespace_)
    text = "".join(words).strip().rstrip("!").strip()
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?")) else f"{text}."


def _joined(token: Token) -> bool:
    """Typed onto the word before it: the "m" of "im"."""
    return token.i > 0 and not token.nbor(-1).whitespace_ and token.nbor(-1).lower_ in _SELF


def _owners(token: Token) -> set[int]:
    return {c.i for c in token.children if c.dep_ == "poss"}


def _said_of_self(verb: Token) -> bool:
    if verb.pos_ not in ("VERB", "AUX"):
        return False
    owner = subject_token(verb)
    return owner is not None and owner.lower_ in _SELF


def _agree(verb: Token) -> str:
    """A verb said of "I" or "we", said of "the user": "am" -> "is", "work" -> "works"."""
    low = verb.lower_
    irregular = _THIRD_PERSON_BE.get(low) or _THIRD_PERSON_HAVE.get(low)
    if irregular is not None:
        return irregular
    if verb.tag_ != "VBP":
        return verb.text  # past tense, a participle: the same for everyone
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return f"{verb.text}es"  # "do" -> "does", "teach" -> "teaches"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return f"{verb.text[:-1]}ies"
    return f"{verb.text}s"
