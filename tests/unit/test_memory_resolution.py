"""Entity resolution step by step: names, contradictions, the cascade and its confidences."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.adapters.model_guard import override_allow_model_requests
from shared.fakes.facts import FakeContactStore, FakeFactStore
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.domain import ResolvedEntity
from shared.models.extraction import EntityMention, ExtractedFact
from shared.models.memory import ExtractionChanges, FactDraft, Person
from shared.ports import Embedder
from shared.services.memory import names
from shared.services.memory.attribution import Attributed
from shared.services.memory.learning import learned_persons
from shared.services.memory.profiles import Mention, contradiction, evidence
from shared.services.memory.resolution import (
    EMBEDDING_MARGIN,
    EMBEDDING_MIN,
    RED_FLAG_FACTS,
    Resolution,
    Resolver,
    name_likeness,
    red_flag_facts,
)
from tests.unit.extraction_kit import NOW, USER, ScriptedModel, person, pid

MARTIN_SON = person("martin_son", "Martin", "child", relation="son", age="8")
MARTIN_WORK = person("martin_work", "Martin", "colleague", occupation="accountant")


def resolver(
    *contacts: Person,
    model: ScriptedModel | None = None,
    turn: Sequence[ResolvedEntity] = (),
    embedder: Embedder | None = None,
) -> Resolver:
    store = FakeContactStore()
    for contact in contacts:
        store.add_person(contact)
    llm = ScriptedLLM(handler=model or ScriptedModel())
    return Resolver(
        USER, store, embedder or HashEmbedder(64), llm, lambda _: [], turn, "msg",
        new_id=lambda profile: pid(f"new:{profile}"),
    )  # fmt: skip


def resolve(mention: Mention, *contacts: Person, **kw: object) -> Resolution:
    return resolver(*contacts, **kw).resolve(mention)  # type: ignore[arg-type]


def who(result: Resolution) -> tuple[str | None, float, str]:
    return (result.person.id if result.person else None, result.confidence, result.step)


# -- names -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("written", "known", "expected"),
    [
        ("Thomas", "thomas", 0.95), ("Zoë", "Zoe", 0.95), ("Tom", "Thomas", 0.85),
        ("Lisi", "Elisabeth", 0.85), ("Thomas", "Thomas Müller", 0.85),
        ("Tom", "Thomas Müller", 0.8), ("Elisabet", "Elisabeth", 0.8),
        ("Katarina", "Katharina", 0.8), ("Anne", "Anna", 0.6), ("Martin", "Martina", 0.0),
        ("Andrea", "Andreas", 0.0), ("Paul", "Paula", 0.0), ("Thomas Weber", "Thomas Müller", 0.0),
        ("Klaus", "Nikolaus", 0.0), ("Lena", "Magdalena", 0.0), ("Peter", "Sara", 0.0),
        ("", "A", 0.0),
    ],
)  # fmt: skip
def test_name_likeness(written: str, known: str, expected: float) -> None:
    assert name_likeness(written, known) == expected


@pytest.mark.parametrize(
    ("phrase", "word", "role"),
    [("my boss", "boss", "colleague"), ("Mum", "mother", "parent"), ("our dog", "dog", "pet"),
     ("meine Schwester", "sister", "sibling"), ("the dentist", "doctor", "service_provider"),
     ("my best friend", "friend", "friend"), ("my wife's colleague", None, None),
     ("his sister", None, None), ("Thomas", None, None)],
)  # fmt: skip
def test_relation_words(phrase: str, word: str | None, role: str | None) -> None:
    relation = names.relation_of(phrase)
    assert (relation.word if relation else None, relation.role if relation else None) == (
        word,
        role,
    )


@pytest.mark.parametrize(
    ("name", "proper"),
    [("Thomas", True), ("Dr. Weber", True), ("my boss", False), ("he", False), ("me", False),
     ("the plumber", False), ("Anna's son", False), ("boss", False)],
)  # fmt: skip
def test_proper_names(name: str, proper: bool) -> None:
    assert names.is_proper_name(name) is proper


@given(st.text(max_size=12), st.text(max_size=12))
def test_edit_distance_is_a_capped_symmetric_metric(a: str, b: str) -> None:
    d = names.edit_distance(a, b)
    assert d == names.edit_distance(b, a)
    assert (d == 0) == (a == b)
    assert 0 <= d <= 3


@given(st.text(alphabet="abcdef", max_size=8))
def test_one_edit_is_distance_one(word: str) -> None:
    assert names.edit_distance(word, word + "x") == 1


# -- contradictions ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mention", "known", "clash"),
    [
        (Mention("Martin", "colleague", {"occupation": "accountant"}), MARTIN_SON, True),
        (Mention("Martin", None, {"age": "40"}), MARTIN_SON, True),
        (Mention("Martin", None, {"age": "9"}), MARTIN_SON, False),
        (Mention("Martin", None, {"age": "8"}), MARTIN_WORK, True),
        (Mention("Max", "pet", {"relation": "dog"}), person("m", "Max", "other"), True),
        (Mention("Max", None, {}), person("m", "Max", "pet"), False),
        (Mention("Luna", "pet", {"relation": "cat"}), person("l", "Luna", "pet", relation="dog"),
         True),
        (Mention("Anna", None, {"relation": "sister"}), person("a", "Anna", "sibling"), False),
        (Mention("Tom", None, {"relation": "brother"}),
         person("t", "Tom", "sibling", relation="sister"), True),
        (Mention("Sara", "other", {"relation": "wife's colleague"}),
         person("s", "Sara", "colleague"), True),
        (Mention("Ben", None, {"employer": "ACME"}), person("b", "Ben", "friend", employer="acme"),
         False),
        (Mention("Ben", None, {"employer": "Globex"}),
         person("b", "Ben", "friend", employer="ACME"), True),
        (Mention("Ben", None, {"city": "Basel"}), person("b", "Ben", "friend", city="Bern"), False),
    ],
)  # fmt: skip
def test_contradictions(mention: Mention, known: Person, clash: bool) -> None:
    assert (contradiction(mention, known) is not None) is clash


def test_evidence_counts_what_matches() -> None:
    mention = Mention("Martin", "child", {"relation": "son", "age": "9"})
    assert (evidence(mention, MARTIN_SON), evidence(mention, MARTIN_WORK)) == (3, 0)


# -- the cascade -------------------------------------------------------------------------------
def test_exact_name_resolves_at_095() -> None:
    result = resolve(Mention("martin"), MARTIN_SON)
    assert (result.outcome, who(result)) == ("person", (MARTIN_SON.id, 0.95, "exact"))


def test_namesakes_told_apart_resolve_at_085() -> None:
    result = resolve(Mention("Martin", "child"), MARTIN_SON, MARTIN_WORK)
    assert who(result) == (MARTIN_SON.id, 0.85, "exact")


def test_role_references() -> None:
    boss = person("boss", "Thomas", "colleague", relation="boss")
    peter = person("peter", "Peter", "colleague")
    julia = person("julia", "Julia", "partner")
    assert resolve(Mention("my boss"), boss, peter).confidence == 0.9
    assert resolve(Mention("my partner"), julia, peter).confidence == 0.85
    unsure = resolve(Mention("my wife"), julia)
    assert (unsure.outcome, unsure.candidate_ids) == ("ambiguous", (julia.id,))


def test_nickname_resolves_at_085() -> None:
    thomas = person("t", "Thomas", "friend")
    result = resolve(Mention("Tom"), thomas)
    assert who(result) == (thomas.id, 0.85, "fuzzy")


def test_the_turns_resolution_comes_first() -> None:
    turn = [ResolvedEntity(mention="Martin", person_id=MARTIN_WORK.id, confidence=0.92)]
    result = resolve(Mention("Martin"), MARTIN_SON, MARTIN_WORK, turn=turn)
    assert who(result) == (MARTIN_WORK.id, 0.92, "turn")


def test_the_red_flag_check_runs_only_on_a_contradiction() -> None:
    model = ScriptedModel()
    model.red_flag = "same"
    plain = resolve(Mention("Martin", None, {"age": "9"}), MARTIN_SON, model=model)
    assert plain.step == "exact" and model.red_flags == []
    flagged = resolve(Mention("Martin", None, {"age": "30"}), MARTIN_SON, model=model)
    assert (flagged.outcome, flagged.step, len(model.red_flags)) == ("person", "red_flag", 1)
    assert "Martin; role: child; age: 8; relation: son" in model.red_flags[0].messages[0].text


def test_the_red_flag_check_sees_the_most_recently_seen_facts_of_the_candidate() -> None:
    """The turn graph and the extraction build their resolvers with this one reader."""
    store = FakeFactStore()
    store.contacts.add_person(MARTIN_SON)
    for day in range(RED_FLAG_FACTS + 2):
        fact = FactDraft(
            text=f"fact of day {day}", subject_entity_id=MARTIN_SON.id, relation_to_user="child",
            confidence=0.9, embedding=[1.0, 0.0], embedding_model="test", idempotency_key=str(day),
        )  # fmt: skip
        store.apply_extraction(
            f"t{day}", USER, ExtractionChanges(new_facts=[fact]), NOW.replace(day=day + 1)
        )
    facts_of = red_flag_facts(store, USER)
    newest_first = [f"fact of day {day}" for day in range(RED_FLAG_FACTS + 1, 1, -1)]
    assert facts_of(MARTIN_SON.id) == newest_first
    assert facts_of(MARTIN_WORK.id) == []


def test_a_model_that_cannot_answer_the_red_flag_leaves_it_ambiguous() -> None:
    llm_model = ScriptedModel()
    llm_model.red_flag = lambda request: {"bad": "reply"}  # type: ignore[assignment,return-value]
    result = resolve(Mention("Martin", "colleague"), MARTIN_SON, model=llm_model)
    assert result.outcome == "ambiguous" and result.candidate_ids == (MARTIN_SON.id,)


def test_new_person_ids_are_stable_and_differ_between_namesakes() -> None:
    brother = Mention("Thomas", "sibling", {"relation": "brother"})
    boss = Mention("Thomas", "colleague", {"relation": "boss"})
    first, again, other = resolve(brother), resolve(brother), resolve(boss)
    assert first.outcome == "new" and first.person and again.person and other.person
    assert first.person.id == again.person.id != other.person.id
    assert first.person.descriptors == {"relation": "brother"}


def test_an_embedding_breaks_a_tie_between_namesakes() -> None:
    bern = person("bern", "Martin", "friend", city="Bern")
    zurich = person("zurich", "Martin", "friend", city="Zurich")
    result = resolve(Mention("Martin", None, {"city": "Bern-Bümpliz"}), bern, zurich)
    assert who(result) == (bern.id, 0.8, "embedding")
    tie = resolve(Mention("Martin", "friend"), bern, zurich)
    assert tie.outcome == "ambiguous"


PROFILE_TIES = [  # (mention profile, the one meant, the other): margin must exceed the noise
    ("Martin; city: Bern-Bümpliz", "Martin; role: friend; city: Bern",
     "Martin; role: friend; city: Zurich", True),
    ("Martin; employer: ACME AG", "Martin; role: colleague; employer: ACME",
     "Martin; role: friend; city: Zurich", True),
    ("Martin; occupation: teacher", "Martin; role: friend; occupation: math teacher",
     "Martin; role: friend; occupation: pilot", True),
    ("Martin; role: friend", "Martin; role: friend; city: Bern",
     "Martin; role: friend; city: Zurich", False),
    ("Martin; age: 40", "Martin; role: friend; age: 41", "Martin; role: friend; age: 14", False),
]  # fmt: skip


def decided(embedder: Embedder, mention: str, meant: str, other: str) -> bool:
    first, a, b = embedder.embed([mention, meant, other])
    sim_a, sim_b = (sum(x * y for x, y in zip(first, v, strict=True)) for v in (a, b))
    return sim_a >= EMBEDDING_MIN and sim_a - sim_b >= EMBEDDING_MARGIN


@pytest.mark.parametrize("dimension", [64, 768])
def test_the_embedding_margin_separates_signal_from_noise_hash(dimension: int) -> None:
    embedder = HashEmbedder(dimension)
    for mention, meant, other, signal in PROFILE_TIES[:2] + PROFILE_TIES[3:]:
        assert decided(embedder, mention, meant, other) is signal, mention


@pytest.mark.model
def test_the_embedding_margin_separates_signal_from_noise_minilm() -> None:
    from shared.adapters.local_embedder import LocalEmbedder

    with override_allow_model_requests(True):
        embedder = LocalEmbedder()
        for mention, meant, other, signal in PROFILE_TIES:
            assert decided(embedder, mention, meant, other) is signal, mention


@pytest.mark.parametrize(
    ("mention", "role"),
    [
        (Mention("Luca", "niece_nephew", {"relation": "anna's son"}), "niece_nephew"),
        (Mention("Maria", "in_law", {"relation": "wife's mother"}), "in_law"),
        (Mention("Sara", "colleague", {"relation": "my wife's colleague"}), "other"),
        (Mention("Eva", "sibling", {"relation": "his sister"}), "other"),
    ],
)
def test_a_role_said_through_someone_else_is_kept_only_when_it_is_one_by_nature(
    mention: Mention, role: str
) -> None:
    """A nephew is the son of someone else; a wife's colleague is nobody's colleague here."""
    assert mention.effective_role == role


def test_an_unnamed_mother_becomes_mom_and_a_sister_stays_unstored() -> None:
    """make dev: "my mom lives in lyon" kept nothing (a fact about nobody), and "where does
    my mom live?" was not known. One has one mother; sisters may be several."""
    mom = resolve(Mention("my mom", "parent", {"relation": "mom"}))
    assert mom.outcome == "new" and mom.person is not None
    assert (mom.person.display_name, mom.person.role_to_user) == ("Mom", "parent")
    assert mom.person.descriptors == {"relation": "mother"}
    assert resolve(Mention("my sister", "sibling", {"relation": "sister"})).outcome == "skip"


def test_the_relative_known_by_the_relation_is_found_again_and_by_name() -> None:
    mom = person("mom", "Mom", "parent", relation="mother")
    again = resolve(Mention("my mother", "parent", {"relation": "mother"}), mom)
    assert again.outcome == "person" and who(again)[0] == mom.id
    named = resolve(Mention("Maria", "parent", {"relation": "mother"}), mom)
    assert named.outcome == "person" and who(named)[0] == mom.id
    known = person("maria", "Maria", "parent", relation="mother")  # already named: a namesake
    assert resolve(Mention("Claire", "parent", {"relation": "mother"}), known).outcome == "new"


def test_mom_named_at_last_shows_the_name_and_keeps_mom_as_an_alias() -> None:
    mom = person("mom", "Mom", "parent", relation="mother")
    fact = ExtractedFact(text="Maria loves gardening", type="Hobby", about="Maria", confidence=0.9)
    found = Resolution("person", "Maria", mom, 0.9, step="role")
    entity = EntityMention(name="Maria", role="parent")
    [taught] = learned_persons([Attributed(fact, found)], [entity])
    assert (taught.display_name, taught.aliases) == ("Maria", ["Mom"])
