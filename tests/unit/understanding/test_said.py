"""Plain sentences kept as said, in the third person; anything asked, hedged, negated, said
to the assistant or without a subject the rules vouch for is left out."""

from __future__ import annotations

import pytest
from spacy.language import Language

from shared.models.extraction import ExtractedFact
from shared.understanding.people import find_people
from shared.understanding.said import said_facts
from shared.understanding.times import find_times
from tests.unit.understanding.conftest import NOW, ZONE


def said(nlp: Language, text: str) -> list[ExtractedFact]:
    doc = nlp(text)
    return said_facts(list(doc.sents), find_people(doc), find_times(doc, NOW, ZONE))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I finished the half marathon in 1:57!",
         ("user", "The user finished the half marathon in 1:57.")),
        ("I've been to Japan twice.", ("user", "The user has been to Japan twice.")),
        ("We're spending Christmas with my parents in Aarau.",
         ("user", "The user is spending Christmas with the user's parents in Aarau.")),
        ("Anna bought a new bike.", ("Anna", "Anna bought a new bike.")),
        ("My new flat is in Wipkingen.", ("user", "The user's new flat is in Wipkingen.")),
        ("My dad's hip operation is on 17 September.",
         ("My dad", "The user's dad's hip operation is on 17 September.")),
        ("Anna's car broke down.", ("Anna", "Anna's car broke down.")),
        ("My mother Ruth makes raclette every Christmas Eve.",
         ("Ruth", "The user's mother Ruth makes raclette every Christmas Eve.")),
        ("my friend nadia moved to toronto last month",
         ("Nadia", "The user's friend Nadia moved to Toronto last month.")),
    ],
)  # fmt: skip
def test_a_plain_sentence_is_kept_as_said(
    nlp: Language, text: str, expected: tuple[str, str]
) -> None:
    [fact] = said(nlp, text)
    assert (fact.about, fact.text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I study law and I go to the gym.",
         [("user", "The user studies law."), ("user", "The user goes to the gym.")]),
        ("Yusuf is 9 and loves football.",
         [("Yusuf", "Yusuf is 9."), ("Yusuf", "Yusuf loves football.")]),
        ("my grandmother rosa lives in napoli and she is 88",
         [("Rosa", "The user's grandmother Rosa lives in Napoli."), ("Rosa", "Rosa is 88.")]),
        ("my grandmother rosa is 84 and lives in napoli",
         [("Rosa", "The user's grandmother Rosa is 84."), ("Rosa", "Rosa lives in Napoli.")]),
        ("Tom works at UBS; he is 40", [("Tom", "Tom works at UBS."), ("Tom", "Tom is 40.")]),
        ("my friend nadia moved to toronto, and she works at Shopify",
         [("Nadia", "The user's friend Nadia moved to Toronto."),
          ("Nadia", "Nadia works at Shopify.")]),
        ("my dad retired last year and he plays golf every sunday",
         [("my dad", "The user's dad retired last year."),
          ("my dad", "The user's dad plays golf every sunday.")]),
        ("my mum is 70 and she lives in Bern",
         [("my mum", "The user's mum is 70."), ("my mum", "The user's mum lives in Bern.")]),
        ("I bought a bike and Anna bought a car",
         [("user", "The user bought a bike."), ("Anna", "Anna bought a car.")]),
    ],
)  # fmt: skip
def test_a_sentence_that_says_two_things_is_two_facts(
    nlp: Language, text: str, expected: list[tuple[str, str]]
) -> None:
    """Each clause alone closes only its own slot when corrected later (the home, not the age)."""
    assert [(fact.about, fact.text) for fact in said(nlp, text)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "I went to Rome and loved it.",  # "it" needs the first clause
        "Anna lives in Bern but works in Zurich.",  # "but" ties the two
        "Anna and Tom live in Bern.",  # one clause, two subjects: left out as before
        "my dad retired and she plays golf",  # "she" is not the dad: left out
    ],
)
def test_clauses_that_do_not_stand_alone_stay_one_sentence(nlp: Language, text: str) -> None:
    assert len(said(nlp, text)) <= 1


def test_each_clause_has_its_own_kind(nlp: Language) -> None:
    allergy, dog = said(nlp, "I'm allergic to cats and I have a dog.")
    assert (allergy.text, allergy.type, allergy.sensitivity) == (
        "The user is allergic to cats.",
        "Allergy",
        "high",
    )
    assert (dog.text, dog.type, dog.sensitivity) == ("The user has a dog.", "Other", "low")


@pytest.mark.parametrize(
    "text",
    [
        "Where does Anna live?",  # asked
        "I think Anna moved to Rome.",  # hedged
        "Anna doesn't eat meat.",  # negated
        "I love you.",  # said to the assistant
        "Thanks, that's all for today!",  # no subject it vouches for
        "Jonas and Oskar cheered at kilometre 15.",  # two people, one sentence
        "The movers broke one leg of my drawing table.",  # about nobody it knows
        "The Magic Mountain is a long book.",  # a title, not a person
    ],
)
def test_what_is_not_plainly_said_of_someone_is_left_out(nlp: Language, text: str) -> None:
    assert said(nlp, text) == []


def test_health_is_kept_sensitive_and_a_day_as_its_time_marker(nlp: Language) -> None:
    [fact] = said(nlp, "I was sick with the flu last Monday.")
    assert (fact.type, fact.sensitivity, fact.temporal_marker) == ("Health", "high", "last Monday")
    [allergy] = said(nlp, "I'm allergic to cats.")
    assert (allergy.type, allergy.sensitivity) == ("Allergy", "high")


def test_his_or_her_thing_is_named_for_the_one_person_it_can_be(nlp: Language) -> None:
    *_, flat = said(nlp, "My brother Tom moved to Bern. His new flat is tiny.")
    assert (flat.about, flat.text) == ("Tom", "Tom's new flat is tiny.")
