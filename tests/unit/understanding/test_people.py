"""People and their roles, and the names the rules cannot place (which keep the part open)."""

from __future__ import annotations

import pytest
from spacy.language import Language

from shared.conversation.relations import TIER_RELATIONS
from shared.models.extraction import Descriptor, EntityMention
from shared.services.memory.names import relation_of
from shared.understanding.people import find_people


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister Anna lives in Berlin.", [("Anna", "sibling", "sister")]),
        ("Anna, my colleague, is off sick today.", [("Anna", "colleague", "colleague")]),
        ("My boss Tom hates meetings.", [("Tom", "colleague", "boss")]),
        ("Our dog Rex loves the beach.", [("Rex", "pet", "dog")]),
        ("Call my mother Maria tomorrow.", [("Maria", "parent", "mother")]),
        ("Anna is my sister.", [("Anna", "sibling", "sister")]),
        ("I have a son named Leo.", [("Leo", "child", "son")]),
        ("We have a cat called Mimi.", [("Mimi", "pet", "cat")]),
        (
            "My parents Hans and Ruth live in Lucerne.",
            [("Hans", "parent", "parent"), ("Ruth", "parent", "parent")],
        ),
        (
            "My brother Tom and his wife Julia moved to Zurich.",
            [("Tom", "sibling", "brother"), ("Julia", "in_law", "his wife")],
        ),
        ("My friend's sister Anna lives in Berlin.", [("Anna", "other", "friend's sister")]),
        ("Clara is my best friend.", [("Clara", "friend", "best friend")]),
        ("Grandma Rosa lives in Naples.", [("Rosa", "grandparent", "grandma")]),
        ("I had lunch with Anna Schmidt.", [("Anna Schmidt", None, None)]),
    ],
)
def test_named_people_and_their_roles(
    nlp: Language, text: str, expected: list[tuple[str, str | None, str | None]]
) -> None:
    people = find_people(nlp(text)).result()
    assert people.decided, people.reason
    assert [(m.name, m.role, m.relation) for m in people.mentions if m.named] == expected


def test_a_relation_without_a_name_is_a_mention_by_its_words(nlp: Language) -> None:
    people = find_people(nlp("Could you email my boss about the delay?")).result()
    assert people.decided
    assert [(m.name, m.role, m.named) for m in people.mentions] == [("my boss", "colleague", False)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Which room did they move Dad to?", ("my dad", "parent")),
        ("How is Mum doing?", ("my mum", "parent")),
    ],
)
def test_dad_said_as_a_name_is_the_users_dad(
    nlp: Language, text: str, expected: tuple[str, str]
) -> None:
    people = find_people(nlp(text)).result()
    assert people.decided
    assert [(m.name, m.role, m.named) for m in people.mentions] == [(*expected, False)]


def test_mentions_carry_the_extractions_entity_shape(nlp: Language) -> None:
    mention = find_people(nlp("My sister Anna lives in Berlin.")).mentions[0]
    assert mention.entity_mention() == EntityMention(
        name="Anna", role="sibling", descriptors=[Descriptor(key="relation", value="sister")]
    )


@pytest.mark.parametrize(
    "text",
    [
        "What does Eva like?",  # the small model tags Eva a verb
        "Tell me everything you know about Sophie.",  # and Sophie an organisation
        "My ex-wife Julia called.",  # not a partner any more
        "a friend Anna is coming",  # whose friend?
        "Lunch with Franc tomorrow.",  # a name, though "franc" is a currency word
    ],
)
def test_names_it_cannot_place_leave_the_part_to_the_model(nlp: Language, text: str) -> None:
    people = find_people(nlp(text)).result()
    assert not people.decided
    assert people.reason


@pytest.mark.parametrize(
    "text", ["I paid 18 CHF for lunch.", "I spent 30 EUR on books.", "It cost 12 francs."]
)
def test_a_currency_is_no_name(nlp: Language, text: str) -> None:
    people = find_people(nlp(text)).result()
    assert people.decided and people.mentions == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("What does Eva like?", ["Eva"]),
        ("Is Leo allergic to anything?", ["Leo"]),
        ("Tell me everything you know about Sophie.", ["Sophie"]),
    ],
)
def test_a_guess_takes_a_lone_unplaced_name_as_a_person(
    nlp: Language, text: str, names: list[str]
) -> None:
    found = find_people(nlp(text))
    assert not found.result().decided
    guessed = found.result(guess=True)
    assert guessed.decided and [(m.name, m.role) for m in guessed.mentions] == [
        (name, None) for name in names
    ]


def test_a_guess_takes_no_title_for_a_person(nlp: Language) -> None:
    people = find_people(nlp("Who wrote The Magic Mountain?")).result(guess=True)
    assert people.decided and people.mentions == []


def test_a_guess_keeps_what_the_rules_found_despite_a_doubt(nlp: Language) -> None:
    people = find_people(nlp("My ex-wife Julia called.")).result(guess=True)
    assert people.decided and [(m.name, m.role) for m in people.mentions] == [("Julia", None)]
    assert "not plainly that role" in people.reason


def test_a_request_verb_is_no_part_of_a_name(nlp: Language) -> None:
    people = find_people(nlp("Email Marc that I'll be late tonight.")).result()
    assert people.decided and [m.name for m in people.mentions] == ["Marc"]


def test_the_tier_and_the_resolver_read_a_relation_word_alike(nlp: Language) -> None:
    """One table of relation words: what the tier reads in a message is the role the
    resolver gives the same word in a mention (they once kept two tables)."""
    for text, word in (("My boss Tom called.", "boss"), ("Our puppy Rex barked.", "puppy")):
        mention = find_people(nlp(text)).mentions[0]
        resolved = relation_of(f"my {word}")
        assert resolved is not None and mention.role == resolved.role, text
    assert "report" not in TIER_RELATIONS and relation_of("my report") is not None
