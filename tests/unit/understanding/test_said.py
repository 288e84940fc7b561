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
        ("I study law and I go to the gym.",
         ("user", "The user studies law and the user goes to the gym.")),
        ("I'm allergic to cats and I have a dog.",
         ("user", "The user is allergic to cats and the user has a dog.")),
        ("I've been to Japan twice.", ("user", "The user has been to Japan twice.")),
        ("We're spending Christmas with my parents in Aarau.",
         ("user", "The user is spending Christmas with the user's parents in Aarau.")),
        ("Anna bought a new bike.", ("Anna", "Anna bought a new bike.")),
        ("My new flat is in Wipkingen.", ("user", "The user's new flat is in Wipkingen.")),
        ("My dad's hip operation is on 17 September.",
         ("My dad", "The user's dad's hip operation is on 17 September.")),
        ("Anna's car broke down.", ("Anna", "Anna's car broke down.")),
        ("Yusuf is 9 and loves football.", ("Yusuf", "Yusuf is 9 and loves football.")),
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
    [allergy] = said(nlp, "I'm allergic to cats and I have a dog.")
    assert (allergy.type, allergy.sensitivity) == ("Allergy", "high")


def test_his_or_her_thing_is_named_for_the_one_person_it_can_be(nlp: Language) -> None:
    *_, flat = said(nlp, "My brother Tom moved to Bern. His new flat is tiny.")
    assert (flat.about, flat.text) == ("Tom", "Tom's new flat is tiny.")
