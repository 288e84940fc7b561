"""What people type on a phone: "remember that ...", lowercase dates, "im", two-word
statements, "don't let me forget to ...", and record words with another sense."""

from __future__ import annotations

import pytest

from shared.understanding.prefaces import told_to_keep
from shared.understanding.tier import Context, UnderstandingTier
from shared.understanding.times import cased


def _said(tier: UnderstandingTier, context: Context, text: str, guess: bool = True) -> list[str]:
    understood = tier.understand(text, context, guess)
    return [f.text for f in [*understood.facts.facts, *understood.facts.said]]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("remember that i'm vegetarian", "The user is vegetarian."),
        ("please remember i'm allergic to cats", "The user is allergic to cats"),
        ("note that im a nurse", "The user is a nurse."),
    ],
)
def test_what_the_user_asks_to_keep_about_themselves_is_memory(
    tier: UnderstandingTier, context: Context, text: str, fact: str
) -> None:
    understood = tier.understand(text, context, guess=True)
    assert understood.route.label == "statement"
    assert understood.plan.steps == []  # no note filed, no research job
    assert fact in _said(tier, context, text)
    assert understood.message == text


@pytest.mark.parametrize(
    "text",
    [
        "note that the wifi password is on the fridge",  # about a thing: a note
        "note that i need to buy milk",  # a to-do: a note
        "remember to lock the doors",  # may ask the assistant itself
        "what do you remember about me?",
    ],
)
def test_notes_to_do_and_questions_are_not_kept_as_told(text: str) -> None:
    assert told_to_keep(text) is None


def test_a_note_about_a_thing_stays_a_note(tier: UnderstandingTier, context: Context) -> None:
    understood = tier.understand("note that the wifi password is on the fridge", context)
    assert understood.route.label == "notes"
    assert understood.plan.steps[0].call is not None
    assert understood.plan.steps[0].call.tool == "notes_add"


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("don't let me forget to pay the rent on the 1st", "schedule"),  # which 1st: asked
        ("remember to call mom tomorrow at 9am", "schedule"),
        ("remind me of how many days off i had this year", None),  # tell me now
        ("remember to lock the doors", None),
    ],
)
def test_reminders_asked_in_other_words(
    tier: UnderstandingTier, context: Context, text: str, route: str | None
) -> None:
    assert tier.understand(text, context).route.label == route


def test_a_reminder_in_other_words_is_read_whole(tier: UnderstandingTier, context: Context) -> None:
    [step] = tier.understand("remember to call mom tomorrow at 9am", context).plan.steps
    assert step.call is not None and step.call.tool == "reminders_add"
    assert step.call.args["text"] == "call mom"
    assert step.call.args["due_at"].startswith("2026-11-22T09:00")


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("her birthday is may 3", "her birthday is May 3"),
        ("the 3rd of march", "the 3rd of March"),
        ("see you on friday", "see you on Friday"),
        ("back in june", "back in June"),
        ("she may come", "she may come"),  # the modal
        ("we march on", "we march on"),  # the verb
        ("we met in may", "we met in may"),  # "may" alone stays as typed
    ],
)
def test_month_and_day_names_typed_in_lower_case_are_read_as_dates(typed: str, read: str) -> None:
    assert cased(typed) == read


def test_a_birthday_typed_in_lower_case_is_a_date_not_a_hedge(
    tier: UnderstandingTier, context: Context
) -> None:
    [fact] = tier.understand("my sister anna's birthday is may 3", context).facts.facts
    assert fact.text == "Anna's birthday is on May 3"
    assert fact.about == "Anna"


def test_a_day_name_is_never_a_person(tier: UnderstandingTier, context: Context) -> None:
    understood = tier.understand("remind me every Monday at 8 to put the bins out", context)
    assert understood.people.decided and understood.people.mentions == []


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("im a teacher in berlin", "The user is a teacher in Berlin."),
        ("ive been to japan twice", "The user has been to japan twice."),
        ("i'm vegetarian", "The user is vegetarian."),
    ],
)
def test_contractions_typed_without_apostrophe_are_told_in_the_third_person(
    tier: UnderstandingTier, context: Context, text: str, fact: str
) -> None:
    assert fact in _said(tier, context, text)


@pytest.mark.parametrize("text", ["I'm back", "I agree", "im fine", "Ciao bella"])
def test_two_words_said_in_passing_keep_nothing(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    assert _said(tier, context, text) == []


def test_notes_in_another_sense_are_no_notes_request(
    tier: UnderstandingTier, context: Context
) -> None:
    guessed = tier.understand("can you give me the standard tuning notes", context, guess=True)
    assert guessed.route.label != "notes"
    assert tier.understand("show me my notes", context, guess=True).route.label == "notes"


def test_naming_a_relative_is_kept_once(tier: UnderstandingTier, context: Context) -> None:
    """On make dev "my cat is called pepe" stored "Pepe is the user's cat" and "The user's
    cat is called Pepe.": one fact twice."""
    understood = tier.understand("my cat is called pepe", context, guess=True)
    assert understood.facts.decided  # nothing left for a model to read
    assert [f.text for f in understood.facts.facts] == ["Pepe is the user's cat"]
    both = tier.understand("my sister is named anna and she lives in rome", context, guess=True)
    assert both.facts.decided  # "is named" states the relation: every clause is read
    assert [f.text for f in both.facts.facts] == ["Anna lives in Rome", "Anna is the user's sister"]


@pytest.mark.parametrize("text", ["i have two kids, mia and leo", "I have two kids, Mia and Leo."])
def test_every_name_after_a_plural_relation_is_one_of_them(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    """make dev stored Mia as the user's kid and lost Leo."""
    people = tier.understand(text, context).people
    assert sorted((m.name, m.role) for m in people.mentions) == [
        ("Leo", "child"), ("Mia", "child"),
    ]  # fmt: skip


def test_two_clauses_joined_by_a_comma_are_two_facts(
    tier: UnderstandingTier, context: Context
) -> None:
    """make dev kept "The user's wife is called Sofia, Sofia works at the hospital." whole,
    and quoted it for "what's sofia's job?"."""
    facts = tier.understand("my wife is called sofia, she works at the hospital", context).facts
    assert [f.text for f in facts.said] == ["Sofia works at the hospital."]
    assert [f.text for f in facts.certain] == ["Sofia is the user's wife"]
    aside = tier.understand("honestly, i love my job", context, guess=True).facts
    assert len(aside.said) <= 1  # no clause before the comma: nothing cut


@pytest.mark.parametrize("text", ["I've been to Lisbon twice", "ive been to lisbon twice"])
def test_what_the_user_has_done_is_told_not_asked(
    tier: UnderstandingTier, context: Context, text: str
) -> None:
    """The present perfect is told as done, like the past: the examples near travel had
    sent it to the research agent."""
    route = tier.understand(text, context, guess=False).route
    assert (route.label, route.guessed) == ("statement", False)


def test_he_is_said_out_so_the_job_is_read(tier: UnderstandingTier, context: Context) -> None:
    """make dev stored "Noah's a chef in Paris." and "what does noah do?" missed it."""
    understood = tier.understand("my best friend is called noah, he's a chef in paris", context)
    assert [f.text for f in understood.facts.said] == ["Noah is a chef in Paris."]


def test_a_name_the_tagger_takes_for_a_verb(tier: UnderstandingTier, context: Context) -> None:
    """make dev: "we have a daughter named kavya" held Kavya pending as someone unknown."""
    understood = tier.understand("we have a daughter named kavya, she is 3", context)
    assert [(m.name, m.role) for m in understood.people.mentions] == [("Kavya", "child")]
    assert understood.facts.decided
    assert {f.text for f in understood.facts.facts} == {
        "Kavya is 3 years old", "Kavya is the user's daughter",
    }  # fmt: skip
