"""Lowercase place names written as names when the rules are sure; "she" in a message that
names nobody read as the one person named in the user's previous messages; family roles;
lowercase names said in passing."""

from __future__ import annotations

from dataclasses import replace

import pytest
from spacy.language import Language

from shared.conversation.relations import RELATIONS
from shared.understanding.places import written
from shared.understanding.tier import Context, UnderstandingTier


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Anna lives in berlin", "Anna lives in Berlin"),
        ("we moved to new york last year", "we moved to New York last year"),
        ("i flew to rio de janeiro", "i flew to Rio de Janeiro"),
        ("my grandmother rosa lives in napoli", "my grandmother rosa lives in Napoli"),
        # common words stay as typed: a verb, adjective or adverb to WordNet, or a thing
        ("I live in reading", "I live in reading"),
        ("he lives near nice", "he lives near nice"),
        ("she works at the bank", "she works at the bank"),
        ("I'm at home", "I'm at home"),
        ("my office is in town", "my office is in town"),
        ("we went to the airport", "we went to the airport"),
        # only where a place stands: "paris" the person is not a place
        ("paris called me", "paris called me"),
        # "been to lisbon": spaCy takes "to lisbon" for an infinitive, lisbon for its verb
        ("i've been to lisbon twice", "i've been to Lisbon twice"),
        ("we're going to porto next week", "we're going to Porto next week"),
        ("i've been to work twice", "i've been to work twice"),
        ("i've been to the gym twice", "i've been to the gym twice"),
        ("i have been to nice twice", "i have been to nice twice"),
        ("i look forward to reading it", "i look forward to reading it"),
    ],
)
def test_a_lowercase_place_is_written_as_a_name_only_when_sure(
    nlp: Language, text: str, expected: str
) -> None:
    assert written(nlp(text)[:]) == expected


def test_a_stored_fact_names_the_place_as_it_is_written(
    tier: UnderstandingTier, context: Context
) -> None:
    facts = tier.understand("My sister Anna lives in berlin", context, guess=True).facts
    assert [f.text for f in facts.facts] == ["Anna lives in Berlin"]
    said = tier.understand("Anna lives in berlin", context, guess=True).facts.said
    assert [f.text for f in said] == ["Anna lives in Berlin."]
    been = tier.understand("i've been to lisbon twice", context, guess=True).facts.said
    assert [f.text for f in been] == ["The user has been to Lisbon twice."]
    work = tier.understand("i've been to work twice", context, guess=True).facts.said
    assert [f.text for f in work] == ["The user has been to work twice."]


FIRST = "my grandmother rosa is 84 and lives in napoli"


def test_she_in_the_next_message_is_the_one_person_named_before(
    tier: UnderstandingTier, context: Context
) -> None:
    before = replace(context, earlier=(FIRST,))
    said = tier.understand("oh wait, she lives in salerno now, not napoli", before, guess=True)
    assert said.route.label == "statement"
    [rosa] = said.people.mentions
    assert (rosa.name, rosa.role, rosa.relation) == ("Rosa", "grandparent", "grandmother")
    # the correction's tail ("not napoli") is what the fact system closes, not the fact
    assert [(f.about, f.text) for f in said.facts.said] == [
        ("Rosa", "Oh wait, Rosa lives in Salerno now.")
    ]
    asked = tier.understand("where does she live?", before, guess=True)
    assert [m.name for m in asked.people.mentions] == ["Rosa"]


@pytest.mark.parametrize(
    ("earlier", "text"),
    [
        ((), "she lives in salerno now"),  # nobody named before
        ((FIRST,), "he lives in salerno now"),  # a grandmother is no "he"
        (("my sister Anna and my friend Eva came over",), "she lives in salerno now"),  # two
        ((FIRST, "my colleague Tom is ill"), "she lives in salerno now"),  # the newest: Tom
        ((FIRST,), "Marta says she lives in salerno now"),  # named here: this message's own
    ],
)
def test_she_stays_unread_when_the_earlier_turns_do_not_name_one_who_fits(
    tier: UnderstandingTier, context: Context, earlier: tuple[str, ...], text: str
) -> None:
    said = tier.understand(text, replace(context, earlier=earlier), guess=True)
    assert "Rosa" not in [m.name for m in said.people.mentions]
    assert not any("Rosa" in f.text for f in [*said.facts.facts, *said.facts.said])


@pytest.mark.parametrize(
    ("word", "role"),
    [
        ("grandmother", "grandparent"), ("nonna", "grandparent"), ("grandpa", "grandparent"),
        ("granddaughter", "grandchild"), ("grandkids", "grandchild"),
        ("aunt", "aunt_uncle"), ("uncle", "aunt_uncle"), ("cousin", "cousin"),
        ("niece", "niece_nephew"), ("nephew", "niece_nephew"),
        ("sister-in-law", "in_law"), ("in-laws", "in_law"),
        ("stepmother", "parent"), ("stepson", "child"), ("stepsister", "sibling"),
        ("godmother", "other"), ("neighbour", "other"),
    ],
)  # fmt: skip
def test_family_words_have_their_roles(word: str, role: str) -> None:
    assert RELATIONS[word].role == role


def test_a_step_relation_is_not_the_relative_it_stands_for() -> None:
    assert RELATIONS["stepmother"].word != RELATIONS["mother"].word


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("had coffee with priya this morning", ["Priya"]),
        ("lena is moving to vienna in june", ["Lena"]),
        ("does oliver have a dog?", ["Oliver"]),
        ("what's jonas's job?", ["Jonas"]),
        ("my grandpa otto still drives his old tractor", ["Otto"]),
        ("my friend ravi visited us", ["Ravi"]),
        # names that are words, things, plural nouns, places: no one
        ("I will call you later", []),
        ("I hope it works", []),
        ("best way to store fresh basil?", []),
        ("Set a budget of 300 for groceries.", []),
        ("Tell me something interesting about volcanoes.", []),
        ("I love sushi.", []),
        ("we moved to sofia last year", []),
    ],
)
def test_lowercase_names_said_in_passing_are_a_guesss_people(
    tier: UnderstandingTier, context: Context, text: str, names: list[str]
) -> None:
    people = tier.understand(text, context, guess=True).people
    assert [m.name for m in people.mentions if m.named] == names
