"""Facts of the common statement shapes, in the extraction model's output shape; anything
hedged, negated, asked or unexplained leaves the facts to the model."""

from __future__ import annotations

import pytest
from spacy.language import Language

from shared.models.extraction import Extraction
from shared.understanding.facts import read_facts
from shared.understanding.people import find_people
from shared.understanding.result import Facts
from shared.understanding.times import find_times
from tests.unit.understanding.conftest import NOW, ZONE


def read(nlp: Language, text: str) -> Facts:
    doc = nlp(text)
    return read_facts(doc, find_people(doc), find_times(doc, NOW, ZONE).resolved)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "My sister Anna lives in Berlin and she loves climbing.",
            [
                ("Anna", "Other", "Anna lives in Berlin"),
                ("Anna", "Preference", "Anna loves climbing"),
            ],
        ),
        ("I live in Zurich.", [("user", "Other", "The user lives in Zurich")]),
        ("My husband Marco works at UBS.", [("Marco", "Work", "Marco works at UBS")]),
        (
            "I work at Google as a software engineer.",
            [
                ("user", "Work", "The user works at Google"),
                ("user", "Work", "The user works as a software engineer"),
            ],
        ),
        ("My cousin Lea works in Munich.", [("Lea", "Work", "Lea works in Munich")]),
        (
            "My husband Marco works at UBS in Zurich as an analyst.",
            [
                ("Marco", "Work", "Marco works at UBS in Zurich"),
                ("Marco", "Work", "Marco works as an analyst"),
            ],
        ),
        ("I really like sushi.", [("user", "Preference", "The user likes sushi")]),
        ("My boss Tom hates meetings.", [("Tom", "Preference", "Tom hates meetings")]),
        (
            "My colleague Tom prefers meetings in the morning.",
            [("Tom", "Preference", "Tom prefers meetings in the morning")],
        ),
        ("I'm allergic to peanuts.", [("user", "Allergy", "The user is allergic to peanuts")]),
        (
            "Anna's birthday is on March 3rd.",
            [("Anna", "Other", "Anna's birthday is on March 3rd")],
        ),
        ("I have a son named Leo.", [("Leo", "Relationship", "Leo is the user's son")]),
        ("Anna is my sister.", [("Anna", "Relationship", "Anna is the user's sister")]),
        ("My friend's sister Anna lives in Berlin.", [("Anna", "Other", "Anna lives in Berlin")]),
    ],
)
def test_statement_shapes(nlp: Language, text: str, expected: list[tuple[str, str, str]]) -> None:
    facts = read(nlp, text)
    assert facts.decided, facts.reason
    assert [(f.about, f.type, f.text) for f in facts.facts] == expected


def test_the_facts_and_mentions_validate_as_the_extraction_models_output(nlp: Language) -> None:
    doc = nlp("My sister Anna lives in Berlin and she loves climbing.")
    found = find_people(doc)
    facts = read_facts(doc, found, [])
    extraction = Extraction.model_validate(facts.extraction(found.result()))
    assert {fact.about for fact in extraction.facts} == {"Anna"}
    assert [(e.name, e.role) for e in extraction.entities] == [("Anna", "sibling")]


def test_an_allergy_is_sensitive_and_sure_enough_for_the_critical_rule(nlp: Language) -> None:
    (fact,) = read(nlp, "My daughter Emma is allergic to cats.").facts
    assert (fact.about, fact.sensitivity, fact.confidence) == ("Emma", "high", 0.95)


def test_a_birthday_with_a_year_carries_its_date(nlp: Language) -> None:
    (fact,) = read(nlp, "Anna was born on 3 March 1990.").facts
    assert (fact.text, fact.date) == ("Anna's birthday is on 3 March 1990", "1990-03-03")


@pytest.mark.parametrize(
    "text",
    [
        "Anna doesn't live in Berlin anymore.",  # negation
        "If my sister lived in Berlin, I would visit her more often.",  # hypothetical
        "I think Tom works at Roche.",  # hedged
        "Does Anna live in Berlin?",  # a question
        "I used to live in Paris.",  # past
        "My colleague Anna is off sick today.",  # no shape
        "My friend Anna's son Max lives in Vienna.",  # whose clause needs a better parse
        "My sister Anna lives in Berlin and she just had a baby.",  # one clause unexplained
        "I love how you remember things.",  # not a thing liked
        "My friend said her sister Eva works at Google.",  # reported
        "I work in marketing.",  # a field, not a place
    ],
)
def test_what_is_not_plainly_one_of_the_shapes_falls_through(nlp: Language, text: str) -> None:
    facts = read(nlp, text)
    assert not facts.decided
    assert facts.facts == []
    assert facts.reason


def test_she_is_not_guessed_between_two_women(nlp: Language) -> None:
    facts = read(nlp, "My sister Anna and my mother Maria visited, and she loves climbing.")
    assert not facts.decided


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "My parents Hans and Ruth live in Lucerne.",
            {("Hans", "Hans lives in Lucerne"), ("Ruth", "Ruth lives in Lucerne")},
        ),
        (
            "Anna and Tom live in Basel.",
            {("Anna", "Anna lives in Basel"), ("Tom", "Tom lives in Basel")},
        ),
        (
            "My sister Anna and I live in Basel.",
            {("Anna", "Anna lives in Basel"), ("user", "The user lives in Basel")},
        ),
        ("My parents live in Rome.", {("My parents", "The user's parents live in Rome")}),
    ],
)
def test_people_who_live_somewhere_together_each_live_there(
    nlp: Language, text: str, expected: set[tuple[str, str]]
) -> None:
    facts = read(nlp, text)
    assert facts.decided, facts.reason
    assert {(f.about, f.text) for f in facts.facts if f.type == "Other"} == expected


def test_two_subjects_of_whom_one_is_nobody_named_fall_through(nlp: Language) -> None:
    """Her dog has no name to hold a fact: the model decides what to keep."""
    assert not read(nlp, "Anna and her dog live in Basel.").decided


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm 35 years old.", ("user", "The user is 35 years old")),
        ("My son Leo is 12.", ("Leo", "Leo is 12 years old")),
        ("My daughter Mia is seven.", ("Mia", "Mia is 7 years old")),
        ("My brother Tom just turned 30.", ("Tom", "Tom is 30 years old")),
        ("My son Leo is 12, not 11.", ("Leo", "Leo is 12 years old")),  # a correction
    ],
)
def test_an_age_is_how_old_someone_is_now(
    nlp: Language, text: str, expected: tuple[str, str]
) -> None:
    facts = read(nlp, text)
    assert facts.decided, facts.reason
    assert expected in {(f.about, f.text) for f in facts.facts}


@pytest.mark.parametrize(
    "text",
    [
        "My brother Tom is 7 feet tall.",  # a number, not an age
        "The meeting is 2 hours long.",  # nobody's
        "My son Leo was 12 then.",  # not now
    ],
)
def test_a_number_that_is_no_age_is_not_read_as_one(nlp: Language, text: str) -> None:
    facts = read(nlp, text)
    assert not any("years old" in f.text for f in facts.facts)


def test_a_relation_stated_by_naming_explains_its_clause(nlp: Language) -> None:
    facts = read(nlp, "My wife is called Julia.")
    assert facts.decided, facts.reason
    assert [(f.about, f.text) for f in facts.facts] == [("Julia", "Julia is the user's wife")]
