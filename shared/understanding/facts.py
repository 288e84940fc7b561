"""Facts for common statement shapes, in the extraction model's output shape.

Shapes (a spaCy ``Matcher`` finds the predicate, the parse its subject and object): lives
in <place>, works at/for <organisation> or in <place>, works as <occupation>, likes /
loves / enjoys / prefers / hates / dislikes <thing>, is allergic to <thing>, <someone>'s birthday is
<date> (or was born on), has a <relation> named <name>, <name> is my <relation>. A named
relative of the user that no other fact is about gets "<name> is the user's <relation>",
so the person is created with the role.

Right or abstain: a sentence that is a question, hedged ("if", "would", "I think"),
negated, or that holds a clause no shape explains makes the whole part fall through to the
extraction model; a partial set of facts is never handed on as if it were complete.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.models.extraction import ExtractedFact
from shared.understanding.kin import holder_side, person_side
from shared.understanding.lexicon import HEDGES, NEGATIONS
from shared.understanding.people import Found
from shared.understanding.places import place_names, written
from shared.understanding.plain import is_modal
from shared.understanding.result import Facts, PersonMention, TimeRef
from shared.understanding.subjects import (
    USER,
    Subject,
    each_subject,
    mention_subject,
    subject_of,
    subject_token,
)

if TYPE_CHECKING:  # spaCy loads with the pipeline, on first use (nlp.py)
    from spacy.matcher import Matcher
    from spacy.tokens import Doc, Span, Token
    from spacy.vocab import Vocab

PREFERENCE_VERBS = ("like", "love", "enjoy", "hate", "dislike", "adore", "prefer")
# Inflected forms, not lemmas: the small model lemmatizes "hates" as "hat".
_FORMS = {verb: [verb, f"{verb}s"] for verb in ("live", "work", *PREFERENCE_VERBS)}
MAX_OBJECT_TOKENS = 6
_PERSONAL = frozenset(
    {"my", "me", "our", "us", "your", "you", "his", "her", "their", "them", "him", "it"}
)
_PATTERNS: dict[str, list[list[dict[str, object]]]] = {
    "lives_in": [[{"LOWER": {"IN": _FORMS["live"]}, "POS": "VERB"}, {"LOWER": "in"}]],
    "works_at": [
        [{"LOWER": {"IN": _FORMS["work"]}, "POS": "VERB"}, {"LOWER": {"IN": ["at", "for", "in"]}}]
    ],
    "works_as": [[{"LOWER": {"IN": _FORMS["work"]}, "POS": "VERB"}, {"LOWER": "as"}]],
    "preference": [
        [
            {
                "LOWER": {"IN": [form for verb in PREFERENCE_VERBS for form in _FORMS[verb]]},
                "POS": {"IN": ["VERB", "AUX", "INTJ"]},  # "I really like" -> INTJ
            }
        ]
    ],
    "allergy": [[{"LOWER": "allergic"}, {"LOWER": "to"}]],
    "birthday": [[{"LOWER": "birthday"}], [{"LOWER": "born"}, {"LOWER": "on"}]],
    "age": [
        [{"LEMMA": "be", "TAG": {"IN": ["VBZ", "VBP"]}}, {"LIKE_NUM": True}],
        [{"LOWER": {"IN": ["turned", "turns"]}}, {"LIKE_NUM": True}],
    ],
}
# An age said in words, up to where people still say it so.
_NUMBER_WORDS = {
    word: n
    for n, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen", "twenty")
    )
}  # fmt: skip
_AGE_UNITS = ("years old", "year old", "yrs old", "yo", "years")
_CLAUSE_ENDS = frozenset({"and", "but", "now", "today", "already", "this", "since"})


@dataclass(frozen=True)
class Reading:
    """One shape read in a sentence: the fact, and the clause verb it explains."""

    fact: ExtractedFact
    verb: Token


class _Unreadable(Exception):
    """A shape matched but its subject or object cannot be vouched for."""


def read_facts(doc: Doc, found: Found, times: list[TimeRef]) -> Facts:
    matches = [(doc.vocab.strings[m], start, end) for m, start, end in _matcher(doc)(doc)]
    try:
        readings = [r for sent in doc.sents for r in _read(sent, matches, found, times)]
    except _Unreadable as exc:
        return Facts(decided=False, reason=str(exc))
    # "a son named Leo": "son" and "Leo" both state the one fact
    facts = list({(r.fact.about, r.fact.text): r.fact for r in readings}.values())
    return Facts(decided=True, facts=facts + relationship_facts(found, {f.about for f in facts}))


def _read(
    sent: Span, matches: list[tuple[str, int, int]], found: Found, times: list[TimeRef]
) -> list[Reading]:
    """Every clause of the sentence explained by a shape, or ``_Unreadable``; a
    correction's tail ("max is 5, not 4") says only what no longer holds."""
    sent = without_contrast(sent)
    reason = doubt(sent)
    if reason:
        raise _Unreadable(reason)
    readings = []
    for shape, start, end in matches:
        if sent.start <= start < sent.end:
            predicate = sent.doc[start]
            readings.extend(_READERS[shape](predicate, sent.doc[end : sent.end], found, times))
    readings.extend(_relations_stated(sent, found))
    clauses = _clause_verbs(sent)
    if not clauses:
        raise _Unreadable("a sentence without a verb the rules can read")
    unexplained = clauses - {r.verb.i for r in readings}
    if unexplained:
        raise _Unreadable(f"no shape explains {sent.doc[min(unexplained)].text!r}")
    return readings


def states_facts(doc: Doc) -> bool:
    """A fact shape anywhere: a request or question that also tells something ("remind me
    ... and note that she likes tulips") leaves its facts to the extraction model."""
    # "What is 2 plus 2?" is no age: a number after "is" tells nothing on its own
    return any(doc.vocab.strings[m] != "age" for m, _, _ in _matcher(doc)(doc))


def _matcher(doc: Doc) -> Matcher:
    return _matcher_of(doc.vocab)


@functools.lru_cache(maxsize=4)  # one per pipeline's vocabulary: built once, ~1 ms each
def _matcher_of(vocab: Vocab) -> Matcher:
    from spacy.matcher import Matcher

    matcher = Matcher(vocab)
    for name, patterns in _PATTERNS.items():
        matcher.add(name, patterns)
    return matcher


def relationship_facts(found: Found, covered: set[str]) -> list[ExtractedFact]:
    """For each named relative no other fact is about: "Maria is the user's mother"; and
    for each relative of a relative, the holder's side: "Anna has a son called Luca"."""
    relations = [
        _fact(_relation_text(m, found), "Relationship", m.name)
        for m in found.mentions
        if m.named
        and m.relation
        and m.role not in (None, "other")
        and (m.name not in covered or m.name in found.held)  # whose relative: not in the role
    ]
    sides = [(holder_side(held), held.holder.name) for held in found.held.values()]
    return relations + [_fact(text, "Relationship", who) for text, who in sides if text]


def _relation_text(mention: PersonMention, found: Found) -> str:
    held = found.held.get(mention.name)
    return person_side(held) if held else f"{mention.name} is the user's {mention.relation}"


def without_contrast(sent: Span) -> Span:
    """A correction's tail that only says what no longer holds ("she lives in salerno now,
    not napoli"): the new value is the fact, the old one the fact system closes."""
    words = list(sent)
    for index, token in enumerate(words[1:-1], start=1):
        tail = [t for t in words[index + 2 :] if not t.is_punct]
        if (
            token.text == ","
            and words[index + 1].lower_ == "not"
            and 0 < len(tail) <= 4
            and not any(t.pos_ in ("VERB", "AUX") for t in tail)
        ):
            return sent[:index]
    return sent


def doubt(sent: Span) -> str:
    words = {t.lower_ for t in sent}
    if sent.text.rstrip().endswith("?") or sent[0].tag_ in ("WRB", "WP") or is_modal(sent[0]):
        return "a question"
    modal = next((t.lower_ for t in sent if is_modal(t)), None)
    if words & HEDGES or modal:
        return f"not stated as plainly true ({modal or sorted(words & HEDGES)[0]!r})"
    if words & NEGATIONS:
        return "negated"
    return ""


def _clause_verbs(sent: Span) -> set[int]:
    """Verbs of the sentence's clauses, and a root with a subject whatever its tag."""
    return {
        t.i
        for t in sent
        if (t.dep_ in ("ROOT", "conj") and t.pos_ in ("VERB", "AUX") and t.head.pos_ != "NOUN")
        or (t.dep_ == "ROOT" and any(c.dep_ == "nsubj" for c in t.children))
    }


def _subject(predicate: Token, found: Found) -> Subject:
    token = subject_token(predicate)
    subject = subject_of(token, found) if token is not None else None
    if subject is None:
        raise _Unreadable(f"no subject for {predicate.text!r}")
    return subject


def _present(predicate: Token) -> None:
    if predicate.tag_ not in ("VBZ", "VBP", "UH") and not any(
        c.tag_ in ("VBZ", "VBP") and c.dep_ == "aux" for c in predicate.children
    ):
        raise _Unreadable(f"{predicate.text!r} is not in the present tense")


def _object_words(rest: Span, *, head: int = -1) -> str:
    """The words after the predicate up to the clause's end ("and she ...", punctuation);
    ``head``: the token the parser took for the verb of "loves" ("she loves climbing")."""
    words: list[Token] = []
    for token in rest:
        if token.is_punct or (token.dep_ == "cc" and words) or token.dep_ in ("nsubj", "mark"):
            break
        if token.pos_ in ("VERB", "AUX") and token.dep_ == "conj" and token.i != head:
            break
        words.append(token)
    if not words or len(words) > MAX_OBJECT_TOKENS or {w.lower_ for w in words} & _PERSONAL:
        raise _Unreadable("no plain object")
    if words[0].tag_ in ("WDT", "WP", "WRB", "IN"):
        raise _Unreadable(f"a clause, not a thing: {words[0].text!r}")
    return rest.doc[words[0].i : words[-1].i + 1].text


def _proper_object(rest: Span, then: tuple[str, ...] = ("as",)) -> str:
    """A place or an organisation: names only, then the clause ends or one of ``then``
    follows ("at ACME as a nurse")."""
    words = []
    places = place_names(rest)  # "lives in berlin": Berlin
    for token in rest:
        if token.pos_ == "PROPN" or token.ent_type_ in ("GPE", "LOC", "ORG") or token.i in places:
            words.append(token)
        elif not (token.lower_ == "the" and not words):
            break
    after = rest.doc[words[-1].i + 1] if words and words[-1].i + 1 < len(rest.doc) else None
    if not words or (words[0].pos_ == "DET" and len(words) == 1):
        raise _Unreadable("the place or organisation is not a name")
    if after is not None and not (after.is_punct or after.dep_ == "cc" or after.lower_ in then):
        raise _Unreadable(f"more after the name: {after.text!r}")
    return written(rest.doc[rest.start : words[-1].i + 1], places)


def _lives_in(predicate: Token, rest: Span, found: Found, _: list[TimeRef]) -> list[Reading]:
    """One fact per person: "My son Leo and his wife Sara live in Bern" is two."""
    _present(predicate)
    token = subject_token(predicate)
    subjects = each_subject(predicate, token, found) if token is not None else []
    # "My parents live in Rome": one subject of many people keeps the plural
    verb = "live" if not subjects and predicate.tag_ == "VBP" else "lives"
    subjects = subjects or [_subject(predicate, found)]
    verb = "lives" if subjects[0].about == USER else verb
    place = _proper_object(rest)
    return [
        Reading(_fact(f"{subject.display} {verb} in {place}", "Other", subject.about), predicate)
        for subject in subjects
    ]


def _works_at(predicate: Token, rest: Span, found: Found, _: list[TimeRef]) -> list[Reading]:
    """Works at (or for) an organisation, or in a place; "at ACME in Basel" keeps the
    place, "at ACME as a nurse" adds the occupation."""
    _present(predicate)
    subject = _subject(predicate, found)
    preposition = predicate.nbor(1).lower_
    where = _proper_object(rest, then=("as",) if preposition == "in" else ("as", "in"))
    after = rest.doc[rest.start + len(where.split()) : rest.end]
    if len(after) > 1 and after[0].lower_ == "in":
        place = _proper_object(after[1:])
        where = f"{where} in {place}"
        after = after[1 + len(place.split()) :]
    readings = [
        Reading(
            _fact(f"{subject.display} works {preposition} {where}", "Work", subject.about),
            predicate,
        )
    ]
    if len(after) > 1 and after[0].lower_ == "as":
        readings.extend(_works_as(predicate, after[1:], found, []))
    return readings


def _works_as(predicate: Token, rest: Span, found: Found, _: list[TimeRef]) -> list[Reading]:
    _present(predicate)
    subject = _subject(predicate, found)
    job = _object_words(rest)
    return [Reading(_fact(f"{subject.display} works as {job}", "Work", subject.about), predicate)]


def _preference(predicate: Token, rest: Span, found: Found, _: list[TimeRef]) -> list[Reading]:
    _present(predicate)
    subject = _subject(predicate, found)
    misparsed = predicate.dep_ == "aux" and predicate.head.i == predicate.i + 1
    thing = _object_words(rest, head=predicate.head.i if misparsed else -1)
    verb = predicate.lower_ if predicate.lower_.endswith("s") else f"{predicate.lower_}s"
    verb_token = predicate.head if misparsed else predicate
    return [
        Reading(_fact(f"{subject.display} {verb} {thing}", "Preference", subject.about), verb_token)
    ]


def _allergy(predicate: Token, rest: Span, found: Found, _: list[TimeRef]) -> list[Reading]:
    subject = _subject(predicate, found)
    if predicate.head.lemma_ != "be" or predicate.head.tag_ not in ("VBZ", "VBP"):
        raise _Unreadable("not 'is allergic to'")
    thing = _object_words(rest)
    fact = _fact(f"{subject.display} is allergic to {thing}", "Allergy", subject.about)
    fact = fact.model_copy(update={"sensitivity": "high", "confidence": 0.95})
    return [Reading(fact, predicate.head)]


def _age(predicate: Token, rest: Span, found: Found, _: list[TimeRef]) -> list[Reading]:
    """ "Ella is 7", "max just turned 4", "I'm 35 years old": how old someone is now."""
    years = _years(predicate.nbor(1).lower_)  # the shape is the verb and the number
    if years is None:
        raise _Unreadable("not an age")
    said = [t.lower_ for t in rest[:2] if not t.is_punct]  # what follows the number
    unit = next((u for u in _AGE_UNITS if said[: len(u.split())] == u.split()), "")
    tail = rest[len(unit.split()) :]
    if len(tail) and not (tail[0].is_punct or tail[0].lower_ in _CLAUSE_ENDS):
        raise _Unreadable(f"more after the number: {tail[0].text!r}")  # "is 7 feet tall"
    subject = _subject(predicate, found)
    text = f"{subject.display} is {years} years old"
    return [Reading(_fact(text, "Other", subject.about), predicate)]


def _years(word: str) -> int | None:
    n = int(word) if word.isdigit() else _NUMBER_WORDS.get(word)
    return n if n is not None and 0 < n <= 120 else None


def _birthday(predicate: Token, rest: Span, found: Found, times: list[TimeRef]) -> list[Reading]:
    sent = predicate.sent
    date = next((t for t in times if sent.start_char <= t.start < sent.end_char), None)
    if date is None or date.clock:
        raise _Unreadable("a birthday without a plain date")
    if predicate.lower_ == "born":
        subject = _subject(predicate, found)
        verb = predicate.head if predicate.dep_ == "auxpass" else predicate
    else:
        owner = next((c for c in predicate.children if c.dep_ == "poss"), None)
        found_subject = None
        if owner is not None and owner.lower_ == "my":
            found_subject = Subject(USER, "The user")
        elif owner is not None and owner.i in found.by_token and owner.i not in found.shared:
            found_subject = mention_subject(found.by_token[owner.i])
        if found_subject is None:
            raise _Unreadable("whose birthday?")
        subject, verb = found_subject, predicate.head
    day = date.text.removeprefix("on ").strip()
    owner_text = "The user's" if subject.about == USER else f"{subject.display}'s"
    fact = _fact(f"{owner_text} birthday is on {day}", "Other", subject.about)
    year_given = any(ch.isdigit() for ch in day) and len(day.split()[-1]) == 4
    fact = fact.model_copy(
        update={
            "temporal_marker": date.text,
            "date": date.at.date().isoformat() if year_given else None,
        }
    )
    return [Reading(fact, verb)]


def _relations_stated(sent: Span, found: Found) -> list[Reading]:
    """Clauses that state a relation: "Anna is my sister", "I have a son named Leo"."""
    readings: list[Reading] = []
    for token in sent:
        mention = found.by_token.get(token.i)
        if mention is None or mention.role in (None, "other") or not mention.named:
            continue
        # "Anna is my sister", "I have a son named Leo", "my wife is called Julia"
        stated = (token.dep_, token.head.lemma_) in (
            ("attr", "be"), ("dobj", "have"), ("oprd", "call"), ("oprd", "name")
        )  # fmt: skip
        if not stated:
            continue
        verb = token.head
        readings.append(
            Reading(_fact(_relation_text(mention, found), "Relationship", mention.name), verb)
        )
    return readings


def _fact(text: str, kind: str, about: str) -> ExtractedFact:
    return ExtractedFact.model_validate(
        {"text": text, "type": kind, "about": about, "confidence": 0.9}
    )


_READERS: dict[str, Callable[[Token, Span, Found, list[TimeRef]], list[Reading]]] = {
    "lives_in": _lives_in,
    "works_at": _works_at,
    "works_as": _works_as,
    "preference": _preference,
    "allergy": _allergy,
    "birthday": _birthday,
    "age": _age,
}
