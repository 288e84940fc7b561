"""Extractive answers: the stored fact quoted, or nothing."""

from __future__ import annotations

import pytest

from shared.understanding.answers import (
    KnownFact,
    answer_from_facts,
    known_instead,
    roles_asked,
)

ANNA = KnownFact(id="f1", subject_id="p1", subject_name="Anna", text="Anna lives in Berlin")
TOM_JOB = KnownFact(id="f2", subject_id="p2", subject_name="Tom", text="Tom works as a nurse")
USER_HOME = KnownFact(id="f3", subject_id=None, subject_name=None, text="The user lives in Bern")


def test_where_someone_lives_quotes_the_stored_fact() -> None:
    answer = answer_from_facts("Where does Anna live?", [TOM_JOB, ANNA])
    assert answer is not None
    assert (answer.text, answer.fact_ids) == ("Anna lives in Berlin.", ["f1"])


def test_a_favourite_or_an_age_nobody_told_is_not_known() -> None:
    """Not a model's guess ("Nadia loves to eat sushi" was one): what is known instead."""
    for question in ("what is anna's favourite food?", "What's Anna's favorite colour?",
                     "how old is anna?"):  # fmt: skip
        assert answer_from_facts(question, [ANNA]) is None
        instead = known_instead(question, [ANNA])
        assert instead is not None
        assert (
            instead.text == "I don't know that yet. What I know about Anna: Anna lives in Berlin."
        )
    told = ANNA.model_copy(update={"id": "f7", "text": "Anna's favourite food is sushi"})
    answer = answer_from_facts("what is anna's favourite food?", [ANNA, told])
    assert answer is not None and answer.text == "Anna's favourite food is sushi."


def test_a_move_says_where_someone_lives_now() -> None:
    moved = ANNA.model_copy(update={"text": "The user's friend Anna moved to Toronto last month"})
    answer = answer_from_facts("where does anna live now?", [TOM_JOB, moved])
    assert answer is not None
    assert answer.text == "Your friend Anna moved to Toronto last month."


def test_the_person_inside_a_relation_phrase_is_the_one_asked_about() -> None:
    answer = answer_from_facts("What does my brother Tom do for a living?", [TOM_JOB], ["Tom"])
    assert answer is not None and "nurse" in answer.text


def test_where_someone_works_is_the_employer_or_the_place_of_the_job() -> None:
    for text in ("Tom works at Roche", "Tom works in Basel", "Tom works as a nurse in Basel"):
        fact = TOM_JOB.model_copy(update={"text": text})
        answer = answer_from_facts("Where does Tom work?", [ANNA, fact])
        assert answer is not None and answer.text == f"{text}."
    assert answer_from_facts("Where does Tom work?", [TOM_JOB]) is None  # no place said


def test_questions_about_the_user() -> None:
    answer = answer_from_facts("Where do I live?", [ANNA, USER_HOME])
    assert answer is not None and answer.fact_ids == ["f3"]


def test_no_fact_no_answer() -> None:
    assert answer_from_facts("Where does Anna work?", [ANNA, TOM_JOB]) is None
    assert answer_from_facts("Where does Lea live?", [ANNA]) is None


def test_two_annas_or_two_homes_are_not_settled_by_quoting() -> None:
    other_anna = ANNA.model_copy(
        update={"id": "f9", "subject_id": "p9", "text": "Anna lives in Rome"}
    )
    assert answer_from_facts("Where does Anna live?", [ANNA, other_anna]) is None
    moved = ANNA.model_copy(update={"id": "f8", "text": "Anna lives in Munich"})
    assert answer_from_facts("Where does Anna live?", [ANNA, moved]) is None


def test_a_negated_fact_answers_nothing() -> None:
    gone = ANNA.model_copy(update={"text": "Anna no longer lives in Berlin"})
    assert answer_from_facts("Where does Anna live?", [gone]) is None


def test_questions_of_other_shapes_are_left_to_the_model() -> None:
    assert answer_from_facts("Why does Anna live in Berlin?", [ANNA]) is None


def test_everything_known_about_someone_or_a_group_is_quoted() -> None:
    sister = ANNA.model_copy(update={"subject_role": "sibling"})
    mother = KnownFact(
        id="f4", subject_id="p4", subject_name="Maria", subject_role="parent",
        text="Maria is the user's mother",
    )  # fmt: skip
    colleague = TOM_JOB.model_copy(update={"subject_role": "colleague"})
    family = answer_from_facts("What do you know about my family?", [sister, mother, colleague])
    assert family is not None
    assert family.text == "Anna lives in Berlin. Maria is your mother."
    assert roles_asked("What do you know about my family?") == {
        "partner", "child", "parent", "sibling", "grandparent", "grandchild", "aunt_uncle",
        "cousin", "niece_nephew", "in_law",
    }  # fmt: skip
    about_tom = answer_from_facts("Tell me everything you know about Tom.", [ANNA, TOM_JOB])
    assert about_tom is not None and about_tom.fact_ids == ["f2"]
    assert answer_from_facts("What do you know about Lea?", [ANNA, TOM_JOB]) is None
    assert answer_from_facts("What do you know about my family?", [ANNA, TOM_JOB]) is None
    assert roles_asked("Where does Anna live?") == frozenset()


def test_what_is_known_instead_of_an_answer_no_fact_gives() -> None:
    said = known_instead("Where does Tom work?", [ANNA, TOM_JOB])
    assert said is not None and said.fact_ids == ["f2"]
    assert said.text == "I don't know that yet. What I know about Tom: Tom works as a nurse."
    assert known_instead("Where does Anna live?", [ANNA]) is None  # answered: quoted instead
    assert known_instead("Where does Lea live?", [ANNA]) is None  # nothing known of Lea
    assert known_instead("Why does Tom work?", [TOM_JOB]) is None  # not a shape it knows


def test_a_question_by_relation_is_answered_from_the_person_of_that_role() -> None:
    """ "where does my grandmother live?" asked of Rosa's facts (on make dev the weak model
    answered it instead, mixing in the sister's hobby)."""
    rosa = KnownFact(id="r1", subject_id="pr", subject_name="Rosa", subject_role="grandparent",
                     text="Rosa lives in Salerno")  # fmt: skip
    anna = ANNA.model_copy(update={"subject_role": "sibling"})
    facts = [rosa, anna]
    for question, mention, said in (
        ("where does my grandmother live?", "my grandmother", "Rosa lives in Salerno."),
        ("where does my nonna live?", "my nonna", "Rosa lives in Salerno."),
        ("Where does my sister live?", "my sister", "Anna lives in Berlin."),
    ):
        answer = answer_from_facts(question, facts, [mention])
        assert answer is not None and answer.text == said, question
    # Anna's name says she is not "my brother"; nobody is "my grandfather" here
    for question, mention in (("where does my brother live?", "my brother"),
                              ("where does my grandfather live?", "my grandfather")):  # fmt: skip
        assert answer_from_facts(question, facts, [mention]) is None
        assert known_instead(question, facts, [mention]) is None
    two = [anna, anna.model_copy(update={"id": "f9", "subject_id": "p9", "subject_name": "Eva",
                                         "text": "Eva lives in Basel"})]  # fmt: skip
    assert answer_from_facts("where does my sister live?", two, ["my sister"]) is None


def test_a_question_no_shape_reads_gets_what_is_known_of_that_person_only() -> None:
    from shared.understanding.answers import all_known

    bernd = KnownFact(id="b1", subject_id="pb", subject_name="Bernd", subject_role="aunt_uncle",
                      text="Bernd is a butcher")  # fmt: skip
    known = all_known([ANNA, bernd, TOM_JOB], ["Bernd"])
    assert known is not None
    assert (known.text, known.fact_ids) == (
        "I'm not sure. What I know about Bernd: Bernd is a butcher.",
        ["b1"],
    )
    assert all_known([ANNA, bernd], ["my uncle"]) == known  # by relation, the same person
    assert all_known([ANNA, TOM_JOB], ["Bernd"]) is None  # nothing known: said elsewhere


def test_what_someone_does_is_answered_from_the_fact_that_says_their_job() -> None:
    """'X is a plumber' fills the job slot; 'what does X do?' quotes it, not everything."""
    job = KnownFact(
        id="f8", subject_id="p8", subject_name="Giorgio",
        text="The user's uncle Giorgio is a plumber in Torino",
    )  # fmt: skip
    home = KnownFact(
        id="f9", subject_id="p8", subject_name="Giorgio", text="Giorgio lives in Milano"
    )
    for question in ("what does giorgio do?", "What does Giorgio do for a living?",
                     "whats giorgio's job"):  # fmt: skip
        answer = answer_from_facts(question, [home, job, TOM_JOB])
        assert answer is not None, question
        assert (answer.text, answer.fact_ids) == (
            "Your uncle Giorgio is a plumber in Torino.",
            ["f8"],
        )
    assert answer_from_facts("what does giorgio do?", [home]) is None  # no job told
    vegetarian = home.model_copy(update={"text": "Giorgio is a vegetarian"})
    assert answer_from_facts("what does giorgio do?", [vegetarian]) is None  # not a job


KIN = [
    KnownFact(
        id="k1",
        subject_id="p9",
        subject_name="Luca",
        text="Luca is the son of the user's sister Anna",
    ),
    KnownFact(id="k2", subject_id="p1", subject_name="Anna", text="Anna has a son called Luca"),
    KnownFact(id="k3", subject_id="p1", subject_name="Anna", text="Anna is the user's sister"),
]


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("who is luca's mother?", "Luca is the son of your sister Anna."),
        ("Who are Luca's parents?", "Luca is the son of your sister Anna."),
        ("who is anna's son?", "Anna has a son called Luca."),
        ("who are anna's kids", "Anna has a son called Luca."),
        ("how is luca related to me?", "Luca is the son of your sister Anna."),
        ("who is anna to me?", "Anna is your sister."),
    ],
)
def test_kin_is_answered_from_either_side(question: str, said: str) -> None:
    answer = answer_from_facts(question, KIN)
    assert answer is not None and answer.text == said


@pytest.mark.parametrize(
    "question", ["who is luca's father?", "who is anna's daughter?", "who is anna's husband?"]
)
def test_kin_nobody_told_of_is_not_known(question: str) -> None:
    """Luca's parent we know is his mother Anna: she is not his father."""
    assert answer_from_facts(question, KIN) is None
    instead = known_instead(question, KIN)
    assert instead is not None and instead.text.startswith("I don't know that yet.")


JULIA = [
    KnownFact(
        id="j1", subject_id="p5", subject_name="Julia", subject_role="partner",
        text="Julia works as a teacher at the local school",
    ),
    KnownFact(
        id="j2", subject_id="p5", subject_name="Julia", subject_role="partner",
        text="Julia is the user's wife",
    ),
]  # fmt: skip


def test_a_job_at_a_place_says_where_someone_works() -> None:
    answer = answer_from_facts("where does julia work?", JULIA)
    assert answer is not None and answer.text == "Julia works as a teacher at the local school."


def test_the_name_of_a_relative_is_the_relation_fact() -> None:
    """make dev: "what's my wife's name?" got "I'm not sure. What I know about Julia: ..."."""
    answer = answer_from_facts("what's my wife's name?", JULIA)
    assert answer is not None and answer.text == "Julia is your wife."
