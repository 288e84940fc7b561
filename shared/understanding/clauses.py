"""A sentence that says two things, cut into its clauses so each is stored as its own fact.

"my grandmother rosa lives in napoli and she is 88" is two facts, a home and an age: kept as
one, a later "she lives in salerno now" would close the age with the home (the home slot
supersedes the whole fact). Cut at "and" or ";" between clauses: "The user's grandmother
Rosa lives in Napoli." and "she is 88" (the caller names "she"). A clause that shares the
sentence's subject ("rosa is 84 and lives in napoli") gets the subject's name in front.

A sentence is cut only when every clause stands alone: it has its own verb, no pronoun but
the subject and the user's own words ("I went to Rome and loved it": "it" needs Rome), and
it is joined by "and" or ";" (not "but", "or", "because", which tie the clauses' meanings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_VERBS = ("VERB", "AUX")
_SUBJECT_DEPS = ("nsubj", "nsubjpass")
_JOINS = frozenset({"and", ";", ","})  # what stands between two clauses
_CUTS = frozenset({";", ","})  # what a clause hung under the next one may end with
# Pronouns a clause may hold and still stand alone: the user's own words, and a person's
# pronoun the caller names (the subject, or his/her things: "he loves his job").
_STANDALONE_PRONOUNS = frozenset(
    {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves",
     "she", "he", "her", "his", "him", "they", "their", "them"}
)  # fmt: skip


@dataclass(frozen=True)
class Clause:
    tokens: list[Token]  # in order, without the joining "and" / ";" / ","
    verb: Token
    subject: Token | None  # its own subject; None: it shares the sentence's ("and lives in")


def clauses(sent: Span) -> list[Clause]:
    """The sentence's clauses when it says several things that each stand alone, else []."""
    root = sent.root
    # "is 84 and lives in": the parser may hang the second verb on the first one's complement
    complements = [c for c in root.children if c.dep_ in ("attr", "acomp")]
    joined = [verb for head in (root, *complements) for verb in _coordinated(head)]
    heads = sorted([root, *joined, *_before_semicolon(root, sent)], key=lambda t: t.i)
    if len(heads) < 2:
        return []
    starts = [sent.start] + [_first(head) for head in heads[1:]]
    ends = [*starts[1:], sent.end]
    found = []
    for head, start, end in zip(heads, starts, ends, strict=True):
        if start != sent.start and not _joined(sent.doc[sent.start : start]):
            return []  # "but", "because", nothing: the clauses' meanings are tied
        tokens = _trimmed(list(sent.doc[start:end]))
        if head not in tokens:
            return []
        own = next((c for c in head.children if c.dep_ in _SUBJECT_DEPS), None)
        if own is None and head.dep_ != "conj":
            return []  # only a conjunct shares the sentence's subject
        found.append(Clause(tokens, head, own))
    return found if all(_stands_alone(clause) for clause in found) else []


def _coordinated(verb: Token) -> list[Token]:
    """Verbs joined to ``verb`` by "and", through a chain ("lives ..., works ... and loves")."""
    found = []
    for child in verb.children:
        if child.dep_ == "conj" and child.pos_ in _VERBS:
            found += [child, *_coordinated(child)]
    return found


def _before_semicolon(root: Token, sent: Span) -> list[Token]:
    """A clause the parser hung under the root across a ";" or a comma ("Tom works at UBS;
    he is 40", "my wife is called sofia, she works at the hospital"): the cut comes after
    it, so it is returned as the root, and the root as the second. Each has its subject."""
    semicolons = [c for c in root.children if c.text in _CUTS and c.i < root.i]
    if not semicolons:
        return []
    cut = semicolons[-1]
    earlier = [
        c
        for c in root.children
        if c.dep_ in ("ccomp", "parataxis") and c.pos_ in _VERBS and c.right_edge.i < cut.i
    ]
    if len(earlier) != 1 or earlier[0].left_edge.i != sent.start:
        return []
    if cut.text == "," and not any(c.dep_ in _SUBJECT_DEPS for c in earlier[0].children):
        return []  # "Honestly, I love it": no clause before the comma
    return earlier


def _first(head: Token) -> int:
    """Where the clause of ``head`` starts: a conjunct at its leftmost word, the root after
    a ";" clause past the ";"."""
    if head.dep_ == "ROOT":
        return max(c.i for c in head.children if c.text in _CUTS and c.i < head.i) + 1
    return int(head.left_edge.i)


def _joined(before: Span) -> bool:
    """The clause follows "and", ";" or a list's comma ("..., works at UBS and ...")."""
    return bool(before) and before[-1].lower_ in _JOINS


def _trimmed(tokens: list[Token]) -> list[Token]:
    while tokens and (tokens[0].lower_ in _JOINS or tokens[0].is_space):
        tokens = tokens[1:]
    while tokens and (tokens[-1].lower_ in _JOINS or tokens[-1].is_space):
        tokens = tokens[:-1]
    return tokens


def _stands_alone(clause: Clause) -> bool:
    pronouns = [t for t in clause.tokens if t.pos_ == "PRON" and t.tag_ != "WP"]
    if any(t.lower_ not in _STANDALONE_PRONOUNS for t in pronouns):
        return False  # "it", "there", "that", "one": says nothing without the other clause
    return any(t.pos_ in _VERBS for t in clause.tokens)
