"""The attribution suite: a fact is never stored against the wrong person.

Each case states the user's contacts, what the turn resolved, what the model extracts (and
answers to a red-flag check), and where every fact must end up:
- "user", or an existing person's key: stored against exactly that subject;
- "new:<Name>:<role>": stored against a person created by this task;
- "pending": held for the user's answer, stored nowhere;
- "skip": stored nowhere, held nowhere.
The check is strict both ways: every stored fact is where the case says (zero facts on a
wrong person) and every expected one is there. Every case runs on the in-memory stores and on
the real PostgreSQL + pgvector (encrypted names, keyed-hash lookups, one transaction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from shared.app.extraction import ExtractionService
from shared.deps import Deps
from shared.models.extraction import Extraction
from shared.models.memory import Fact, FactFilter, Person
from tests.contract.conftest import FactBackend
from tests.unit.extraction_kit import (
    USER,
    RedFlag,
    ScriptedModel,
    entity,
    extraction,
    extraction_deps,
    fact,
    person,
    pid,
    task,
)

MARTIN_SON = person("martin_son", "Martin", "child", relation="son", age="8")
MARTIN_WORK = person("martin_work", "Martin", "colleague", occupation="accountant")
THOMAS_BOSS = person("thomas_boss", "Thomas", "colleague", relation="boss")
THOMAS_BROTHER = person("thomas_brother", "Thomas", "sibling", relation="brother")
THOMAS_FRIEND = person("thomas_friend", "Thomas", "friend")
ELISABETH = person("elisabeth", "Elisabeth", "sibling", relation="sister")
ANNA = person("anna", "Anna", "sibling")
ANNA_MEIER = person("anna_meier", "Anna Meier", "friend")
MAX_WORK = person("max_work", "Max", "colleague")
MAX_DOG = person("max_dog", "Max", "pet", relation="dog")
LUNA_DOG = person("luna_dog", "Luna", "pet", relation="dog")
JULIA_WIFE = person("julia", "Julia", "partner", relation="wife")
JULIA_PARTNER = person("julia_partner", "Julia", "partner")
SARA_WORK = person("sara_work", "Sara", "colleague")
LEO_SON = person("leo_son", "Leo", "child", relation="son", age="3")
PETER_WORK = person("peter_work", "Peter", "colleague")
BOBS_THOMAS = person("bobs_thomas", "Thomas", "friend", user="bob")


@dataclass(frozen=True)
class Case:
    id: str
    contacts: tuple[Person, ...]
    output: Extraction
    expect: dict[str, str]
    turn: tuple[tuple[str, str | None, float], ...] = ()
    red_flag: RedFlag | None = None  # None: the cheap steps must decide, no model check


def about(name: str, text: str, **kw: Any) -> dict[str, Any]:
    return fact(text, about=name, **kw)


def one(name: str, text: str, *entities: dict[str, Any]) -> Extraction:
    return extraction(about(name, text), entities=entities)


CASES = [
    # -- same first names -------------------------------------------------------------------
    Case("son_martin_told_apart_by_age", (MARTIN_SON, MARTIN_WORK),
         one("Martin", "Martin started judo", entity("Martin", "child", age="8")),
         {"Martin started judo": "martin_son"}),
    Case("colleague_martin_told_apart_by_job", (MARTIN_SON, MARTIN_WORK),
         one("Martin", "Martin does the tax returns",
             entity("Martin", "colleague", occupation="accountant")),
         {"Martin does the tax returns": "martin_work"}),
    Case("son_martin_told_apart_by_relation_word", (MARTIN_SON, MARTIN_WORK),
         one("Martin", "Martin lost a tooth", entity("Martin", relation="son")),
         {"Martin lost a tooth": "martin_son"}),
    Case("accountant_martin_is_not_the_son", (MARTIN_SON,),
         one("Martin", "Martin audits ACME",
             entity("Martin", "colleague", occupation="accountant")),
         {"Martin audits ACME": "new:Martin:colleague"}, red_flag="different"),
    Case("accountant_martin_unsure_is_held", (MARTIN_SON,),
         one("Martin", "Martin audits ACME",
             entity("Martin", "colleague", occupation="accountant")),
         {"Martin audits ACME": "pending"}, red_flag="unsure"),
    Case("model_says_same_martin_despite_the_job", (MARTIN_WORK,),
         one("Martin", "Martin moved teams", entity("Martin", occupation="controller")),
         {"Martin moved teams": "martin_work"}, red_flag="same"),
    Case("two_martins_and_a_bare_name_is_pending", (MARTIN_SON, MARTIN_WORK),
         one("Martin", "Martin is ill", entity("Martin")),
         {"Martin is ill": "pending"}),
    Case("a_years_older_son_is_still_the_son", (MARTIN_SON,),
         one("Martin", "Martin turned 9", entity("Martin", "child", age="9")),
         {"Martin turned 9": "martin_son"}),
    Case("turn_resolution_overruled_by_a_red_flag", (MARTIN_WORK,),
         one("Martin", "Martin starts school", entity("Martin", "child", relation="son", age="6")),
         {"Martin starts school": "new:Martin:child"},
         turn=(("Martin", "martin_work", 0.9),), red_flag="different"),
    # -- nicknames ------------------------------------------------------------------------
    Case("tom_is_thomas", (THOMAS_FRIEND,),
         one("Tom", "Tom plays the cello", entity("Tom")),
         {"Tom plays the cello": "thomas_friend"}),
    Case("lisi_is_elisabeth", (ELISABETH,),
         one("Lisi", "Lisi moved to Graz", entity("Lisi", relation="sister")),
         {"Lisi moved to Graz": "elisabeth"}),
    Case("an_alias_matches_exactly",
         (person("thomas_alias", "Thomas", "friend", aliases=("Tommy",)),),
         one("Tommy", "Tommy got married", entity("Tommy")),
         {"Tommy got married": "thomas_alias"}),
    Case("tom_with_two_thomases_is_pending", (THOMAS_BOSS, THOMAS_BROTHER),
         one("Tom", "Tom is in Rome", entity("Tom")), {"Tom is in Rome": "pending"}),
    Case("tom_is_the_first_name_of_a_full_name",
         (person("thomas_m", "Thomas Müller", "colleague"),),
         one("Tom", "Tom leads the audit", entity("Tom", "colleague")),
         {"Tom leads the audit": "thomas_m"}),
    Case("anna_is_the_first_name_of_anna_meier", (ANNA_MEIER,),
         one("Anna", "Anna runs marathons", entity("Anna")),
         {"Anna runs marathons": "anna_meier"}),
    Case("martina_is_not_martin", (MARTIN_SON,),
         one("Martina", "Martina is a pilot", entity("Martina", "friend", occupation="pilot")),
         {"Martina is a pilot": "new:Martina:friend"}),
    Case("a_typo_in_a_long_name", (ELISABETH,),
         one("Elisabet", "Elisabet has a new car", entity("Elisabet")),
         {"Elisabet has a new car": "elisabeth"}),
    Case("anne_might_be_anna_so_pending", (ANNA,),
         one("Anne", "Anne loves opera", entity("Anne")), {"Anne loves opera": "pending"}),
    Case("maximilian_from_work_is_not_the_dog_max", (MAX_DOG,),
         one("Maximilian", "Maximilian joined sales", entity("Maximilian", "colleague")),
         {"Maximilian joined sales": "new:Maximilian:colleague"}, red_flag="different"),
    # -- pets with people's names ---------------------------------------------------------
    Case("our_dog_max_is_not_max_from_work", (MAX_WORK,),
         one("Max", "Max is afraid of thunder", entity("Max", "pet", relation="dog")),
         {"Max is afraid of thunder": "new:Max:pet"}, red_flag="different"),
    Case("max_from_work_is_not_the_dog", (MAX_DOG,),
         one("Max", "Max presents on Monday", entity("Max", "colleague", employer="ACME")),
         {"Max presents on Monday": "new:Max:colleague"}, red_flag="different"),
    Case("both_maxes_known_the_dog", (MAX_WORK, MAX_DOG),
         one("Max", "Max needs a vet visit", entity("Max", "pet")),
         {"Max needs a vet visit": "max_dog"}),
    Case("both_maxes_known_the_colleague", (MAX_WORK, MAX_DOG),
         one("Max", "Max got promoted", entity("Max", "colleague")),
         {"Max got promoted": "max_work"}),
    Case("both_maxes_and_a_bare_name_is_pending", (MAX_WORK, MAX_DOG),
         one("Max", "Max loves the beach", entity("Max")), {"Max loves the beach": "pending"}),
    Case("a_cat_named_like_the_dog_is_another_pet", (LUNA_DOG,),
         one("Luna", "Luna sleeps all day", entity("Luna", "pet", relation="cat")),
         {"Luna sleeps all day": "new:Luna:pet"}, red_flag="different"),
    Case("pet_or_person_unsure_is_held", (MAX_WORK,),
         one("Max", "Max chewed a shoe", entity("Max", "pet")),
         {"Max chewed a shoe": "pending"}, red_flag="unsure"),
    # -- "my boss Thomas" vs "Thomas my brother" ------------------------------------------
    Case("brother_thomas_is_not_the_boss", (THOMAS_BOSS,),
         one("Thomas", "Thomas is visiting in May",
             entity("Thomas", "sibling", relation="brother")),
         {"Thomas is visiting in May": "new:Thomas:sibling"}, red_flag="different"),
    Case("both_thomases_known_the_brother", (THOMAS_BOSS, THOMAS_BROTHER),
         one("Thomas", "Thomas bought a boat", entity("Thomas", relation="brother")),
         {"Thomas bought a boat": "thomas_brother"}),
    Case("both_thomases_known_the_boss", (THOMAS_BOSS, THOMAS_BROTHER),
         one("Thomas", "Thomas wants the report", entity("Thomas", "colleague", relation="boss")),
         {"Thomas wants the report": "thomas_boss"}),
    Case("boss_and_brother_thomas_in_one_message", (THOMAS_BOSS, THOMAS_BROTHER),
         extraction(about("Thomas", "Thomas is in Paris"),
                    entities=(entity("Thomas", "colleague", relation="boss"),
                              entity("Thomas", "sibling", relation="brother"))),
         {"Thomas is in Paris": "pending"}),
    Case("my_boss_names_the_one_boss", (THOMAS_BOSS, PETER_WORK),
         one("my boss", "The user's boss is on holiday", entity("my boss", "colleague")),
         {"The user's boss is on holiday": "thomas_boss"}),
    Case("my_boss_unknown_is_skipped", (ANNA, MAX_DOG),
         one("my boss", "The user's boss is strict", entity("my boss", relation="boss")),
         {"The user's boss is strict": "skip"}),
    Case("my_boss_may_be_an_unlabelled_colleague_so_pending", (PETER_WORK,),
         one("my boss", "The user's boss is strict", entity("my boss", relation="boss")),
         {"The user's boss is strict": "pending"}),
    Case("my_sister_is_never_the_brother", (THOMAS_BROTHER,),
         one("my sister", "The user's sister is pregnant", entity("my sister", "sibling")),
         {"The user's sister is pregnant": "skip"}),
    Case("my_sister_and_an_unlabelled_sibling_is_pending", (ANNA,),
         one("my sister", "The user's sister sings", entity("my sister", "sibling")),
         {"The user's sister sings": "pending"}),
    Case("my_wife_is_the_wife", (JULIA_WIFE, SARA_WORK),
         one("my wife", "The user's wife is a teacher", entity("my wife", "partner")),
         {"The user's wife is a teacher": "julia"}),
    Case("my_partner_is_the_only_partner", (JULIA_PARTNER, SARA_WORK),
         one("my partner", "The user's partner bakes", entity("my partner", "partner")),
         {"The user's partner bakes": "julia_partner"}),
    Case("my_colleague_among_several_is_pending", (PETER_WORK, SARA_WORK),
         one("my colleague", "The user's colleague quit", entity("my colleague", "colleague")),
         {"The user's colleague quit": "pending"}),
    Case("about_the_phrase_around_the_name", (THOMAS_BOSS, THOMAS_BROTHER),
         one("my boss Thomas", "Thomas flies to Tokyo",
             entity("Thomas", "colleague", relation="boss")),
         {"Thomas flies to Tokyo": "thomas_boss"}),
    # -- pronouns across turns ------------------------------------------------------------
    Case("he_without_the_turns_resolution_is_skipped", (THOMAS_FRIEND,),
         one("he", "He is moving to Berlin"), {"He is moving to Berlin": "skip"}),
    Case("she_resolved_by_the_turn", (ANNA,),
         one("she", "She got the job"), {"She got the job": "anna"},
         turn=(("she", "anna", 0.9),)),
    Case("he_resolved_unsurely_by_the_turn_is_skipped", (THOMAS_FRIEND,),
         one("he", "He broke his leg"), {"He broke his leg": "skip"},
         turn=(("he", "thomas_friend", 0.6),)),
    Case("they_is_skipped", (PETER_WORK, SARA_WORK),
         one("they", "They are getting married"), {"They are getting married": "skip"}),
    # -- third parties in the user's message ----------------------------------------------
    Case("wifes_colleague_sara_is_not_my_colleague_sara", (SARA_WORK, JULIA_WIFE),
         one("Sara", "Sara plays tennis", entity("Sara", "other", relation="wife's colleague")),
         {"Sara plays tennis": "new:Sara:other"}, red_flag="different"),
    Case("wifes_colleague_facts_stay_off_the_wife", (JULIA_WIFE,),
         extraction(about("my wife", "The user's wife teaches maths"),
                    about("Sara", "Sara is a chemist"),
                    entities=(entity("my wife", "partner"),
                              entity("Sara", "other", relation="wife's colleague"))),
         {"The user's wife teaches maths": "julia", "Sara is a chemist": "new:Sara:other"}),
    Case("annas_son_leo_is_not_my_son_leo", (LEO_SON, ANNA),
         one("Leo", "Leo is 5", entity("Leo", "other", relation="Anna's son", age="5")),
         {"Leo is 5": "new:Leo:other"}, red_flag="different"),
    Case("my_friends_mother_is_skipped", (ANNA,),
         one("my friend's mother", "The friend's mother is ill"),
         {"The friend's mother is ill": "skip"}),
    # -- the user themself ------------------------------------------------------------------
    Case("the_user_in_every_spelling", (THOMAS_FRIEND,),
         extraction(about("user", "Alice is vegan"), about("me", "Alice runs"),
                    about("I", "Alice sails"), about("myself", "Alice knits")),
         {"Alice is vegan": "user", "Alice runs": "user", "Alice sails": "user",
          "Alice knits": "user"}),
    Case("the_user_by_name_through_the_turn", (),
         one("Alice", "Alice is a lawyer"), {"Alice is a lawyer": "user"},
         turn=(("Alice", None, 0.95),)),
    Case("the_user_and_a_namesake_in_one_message", (MARTIN_SON, MARTIN_WORK),
         extraction(about("user", "Alice has two kids"), about("Martin", "Martin is tall"),
                    entities=(entity("Martin"),)),
         {"Alice has two kids": "user", "Martin is tall": "pending"}),
    # -- what the turn resolved -------------------------------------------------------------
    Case("a_sure_turn_resolution_picks_the_namesake", (THOMAS_BOSS, THOMAS_BROTHER),
         one("Thomas", "Thomas is sick", entity("Thomas")), {"Thomas is sick": "thomas_boss"},
         turn=(("Thomas", "thomas_boss", 0.95),)),
    Case("an_unsure_turn_resolution_decides_nothing", (THOMAS_BOSS, THOMAS_BROTHER),
         one("Thomas", "Thomas is tired", entity("Thomas")), {"Thomas is tired": "pending"},
         turn=(("Thomas", "thomas_boss", 0.5),)),
    # -- strangers ------------------------------------------------------------------------
    Case("a_new_name_without_a_role_is_pending", (ANNA,),
         one("Lena", "Lena likes sushi", entity("Lena")), {"Lena likes sushi": "pending"}),
    Case("a_new_name_with_a_role_is_a_new_person", (ANNA,),
         one("Lena", "Lena coaches hockey", entity("Lena", "friend")),
         {"Lena coaches hockey": "new:Lena:friend"}),
    Case("another_users_thomas_is_never_a_candidate", (BOBS_THOMAS,),
         one("Thomas", "Thomas owns a bakery", entity("Thomas")),
         {"Thomas owns a bakery": "pending"}),
]  # fmt: skip


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel()


@pytest.fixture
def deps(fact_backend: FactBackend, model: ScriptedModel) -> Deps:
    return extraction_deps(fact_backend.facts, fact_backend.contacts, fact_backend.pending, model)


def where(deps: Deps, fact: Fact, known: set[str]) -> str:
    """Where a stored fact ended up, in the cases' vocabulary."""
    if fact.subject_entity_id is None:
        return "user"
    if fact.subject_entity_id in known:
        return next(key for key in KEYS if pid(key) == fact.subject_entity_id)
    created = deps.contacts.get_person(USER, fact.subject_entity_id)
    assert created is not None, "a fact names a person the user does not have"
    return f"new:{created.display_name}:{created.role_to_user}"


KEYS = [
    "martin_son", "martin_work", "thomas_boss", "thomas_brother", "thomas_friend", "elisabeth",
    "anna", "anna_meier", "max_work", "max_dog", "luna_dog", "julia", "julia_partner",
    "sara_work", "leo_son", "peter_work", "thomas_alias", "thomas_m", "bobs_thomas",
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_no_fact_is_attached_to_the_wrong_person(
    deps: Deps, model: ScriptedModel, case: Case
) -> None:
    for contact in case.contacts:
        deps.contacts.add_person(contact)
    model.output, model.red_flag = case.output, case.red_flag
    ExtractionService(deps).run(task("the message", entities=case.turn))

    known = {contact.id for contact in case.contacts}
    stored = {f.text: where(deps, f, known) for f in deps.facts.list_facts(USER, FactFilter())}
    held = {
        draft.text
        for item in deps.pending.list_pending(USER)
        if item.kind == "disambiguation"
        for draft in item.facts
    }
    wanted = {text: to for text, to in case.expect.items() if to not in ("pending", "skip")}
    assert stored == wanted  # nothing on a wrong subject, nothing missing
    assert held == {text for text, to in case.expect.items() if to == "pending"}
    assert deps.facts.list_facts("bob", FactFilter()) == []
    assert bool(model.red_flags) == (case.red_flag is not None)  # consulted when scripted


def test_the_suite_is_big_enough() -> None:
    assert len(CASES) >= 40 and len({case.id for case in CASES}) == len(CASES)
