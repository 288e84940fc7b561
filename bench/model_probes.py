"""Small labelled probes of a text model (for ``bench.models``): structured output against a
JSON schema, and short factual replies. Written for this bench; answers checked in code."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Relation = Literal["sibling", "parent", "child", "partner", "friend", "colleague", "other"]


class Mention(BaseModel):
    name: str
    relation: Relation
    city: str | None = None


class Mentions(BaseModel):
    people: list[Mention] = Field(max_length=4)


EXTRACT_SYSTEM = (
    "Extract the people the user mentions: their first name, how they relate to the user, "
    "and the city they live in if the message says so (else null)."
)
# message -> expected (name, relation, city) for each person
EXTRACTION: dict[str, set[tuple[str, str, str | None]]] = {
    "My sister Anna lives in Berlin.": {("Anna", "sibling", "Berlin")},
    "My colleague Tom is moving to Lyon next month.": {("Tom", "colleague", "Lyon")},
    "Our son Max just started school.": {("Max", "child", None)},
    "My mother Maria called me from Porto.": {("Maria", "parent", "Porto")},
    "I had lunch with my friend Sara.": {("Sara", "friend", None)},
    "My husband Paul works in Geneva and my brother Leo lives in Bern.": {
        ("Paul", "partner", "Geneva"),
        ("Leo", "sibling", "Bern"),
    },
    "My dad Peter loves fishing.": {("Peter", "parent", None)},
    "My boss Karen lives in Oslo.": {("Karen", "colleague", "Oslo")},
}

REPLY_SYSTEM = "You are a helpful assistant. Answer in one short sentence."
# question -> a word the answer must contain
REPLIES = {
    "What is the capital of France?": "paris",
    "What colour is the sky on a clear day?": "blue",
    "How many days are in a week?": "seven|7",
    "Which animal barks?": "dog",
    "What is the opposite of hot?": "cold",
    "What do bees make?": "honey",
}


def extraction_score(message: str, found: Mentions) -> tuple[int, int, int]:
    """(people expected, people found with the right name, ... and right relation and city)."""
    expected = EXTRACTION[message]
    got = {(m.name.strip(), m.relation, (m.city or None)) for m in found.people}
    names = {name for name, _, _ in expected} & {name for name, _, _ in got}
    return len(expected), len(names), len(expected & got)
