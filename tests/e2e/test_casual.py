"""Casual messages on the local model (SmolLM2 on the test stack's model service): lowercase
names, a correction then the question, a question nothing stored answers, and reading the
reminders. Each checked through the memory API and the reply."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.deps import Deps
from shared.models.agent_data import Expense
from tests.e2e.conftest import Served, wait_for
from tests.e2e.test_newcomer import on_local_model  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.stack, pytest.mark.model]


class Chat:
    def __init__(self, served: Served) -> None:
        self.served, self.user = served, f"casual-{uuid.uuid4().hex[:8]}"
        self.chat_id: str | None = None

    def say(self, text: str) -> dict[str, Any]:
        body = {"message": text, "client_message_id": uuid.uuid4().hex}
        if self.chat_id is not None:
            body["chat_id"] = self.chat_id
        response = self.served.say(self.user, body)
        assert response.status_code == 200, response.text
        reply: dict[str, Any] = response.json()
        self.chat_id = reply["chat_id"]
        return reply

    def memory(self, method: str, path: str, **params: Any) -> Any:
        response = self.served.memory(self.user, method, path, **params)
        assert response.status_code == 200, response.text
        return response.json()

    def person(self, name: str) -> dict[str, Any] | None:
        found = [
            p for p in self.memory("GET", "/v1/persons")["persons"] if p["display_name"] == name
        ]
        return found[0] if len(found) == 1 else None

    def facts_of(self, person_id: str) -> list[str]:
        return [f["text"] for f in self.served.facts(self.user, f'subject_id = "{person_id}"')]


@pytest.mark.timeout(900)
def test_casual_messages_on_the_local_model(on_local_model: Served) -> None:  # noqa: F811
    me = Chat(on_local_model)
    # a lowercase name is a person, and the question about her is answered from her facts
    me.say("my friend nadia moved to toronto last month")
    nadia = wait_for(lambda: me.person("Nadia"), seconds=120)
    assert nadia["role_to_user"] == "friend"
    assert wait_for(lambda: any("toronto" in f.lower() for f in me.facts_of(nadia["id"])), 60)
    assert "toronto" in me.say("where does nadia live now?")["reply"]["text"].lower()

    # a correction supersedes: the new employer is current, its words are not stored
    me.say("I am allergic to peanuts.")
    me.say("My brother Luca works at Siemens as an engineer.")
    luca = wait_for(lambda: me.person("Luca"), seconds=120)
    wait_for(lambda: any("Siemens" in f for f in me.facts_of(luca["id"])), 60)
    me.say("Actually Luca works at Bosch now.")
    facts = wait_for(
        lambda: any("Bosch" in f for f in me.facts_of(luca["id"])) and me.facts_of(luca["id"]), 120
    )
    assert not any("Siemens" in f for f in facts), facts
    assert not any("actually" in f.lower() for f in facts), facts
    work = me.say("Where does Luca work?")["reply"]["text"]
    assert "Bosch" in work and "Siemens" not in work and "peanut" not in work, work

    # nothing stored answers it: said so, with what is known of Luca only
    birthday = me.say("When is Luca's birthday?")["reply"]["text"]
    assert birthday.startswith("I don't know that yet.") and "peanut" not in birthday, birthday

    # reading is not acting: no approval asked, the answer in the reply
    reminders = me.say("what are my reminders")
    assert reminders.get("interrupt") is None
    assert reminders["reply"]["text"] == "You have no open reminders."
    me.memory("DELETE", "/v1/account", confirm="true")


@pytest.mark.timeout(900)
def test_a_spending_question_is_read_from_the_recorded_expenses(
    on_local_model: Served,  # noqa: F811
    stores: Deps,
) -> None:
    """make dev: "how much did i spend this week?" started a budget research job. Now the
    expenses in Firestore are read in the turn and said per currency as recorded (the user
    has no currency set): no approval, no job."""
    me = Chat(on_local_model)
    zone = {"timezone": "Europe/Zurich"}
    patched = on_local_model.memory(me.user, "PATCH", "/v1/settings/assistant", zone)
    assert patched.status_code == 200, patched.text
    now = datetime.now(UTC)
    for n, (minor, currency) in enumerate([(1250, "EUR"), (300, "USD"), (3000, "EUR")]):
        at = now - timedelta(seconds=30 + n)
        expense = Expense(id=f"e{n}", amount_minor=minor, currency=currency,
                          category="restaurants", spent_at=at, created_at=at)  # fmt: skip
        stores.agent_data.put_expense(me.user, expense)
    answer = me.say("how much did i spend today")
    text = answer["reply"]["text"]
    assert (answer.get("interrupt"), answer.get("jobs")) == (None, []), answer
    assert text.startswith("Today (") and text.endswith(
        " you recorded 3 expenses: 42.50 EUR and 3.00 USD."
    ), text
    none = me.say("what did i spend on groceries yesterday")["reply"]["text"]
    assert none.startswith("You haven't recorded any expenses on groceries yesterday ("), none
    response = on_local_model.api("GET", "/v1/jobs", me.user)
    assert response.status_code == 200 and response.json()["jobs"] == [], response.text
    me.memory("DELETE", "/v1/account", confirm="true")


@pytest.mark.timeout(900)
def test_a_pronoun_corrects_the_person_named_before(on_local_model: Served) -> None:  # noqa: F811
    """ "she" in the next message is the grandmother named before: the new home supersedes the
    old one (kept as history) and only it, the age said in the same sentence stays current;
    places are written as names, the role is a grandparent's."""
    me = Chat(on_local_model)
    me.say("my grandmother rosa lives in napoli and she is 88")
    rosa = wait_for(lambda: me.person("Rosa"), seconds=120)
    assert rosa["role_to_user"] == "grandparent"
    first = wait_for(lambda: len(me.facts_of(rosa["id"])) >= 2 and me.facts_of(rosa["id"]), 60)
    assert any("Napoli" in f and "88" not in f for f in first), first  # two facts, not one
    assert any("88" in f and "Napoli" not in f for f in first), first
    assert not any("napoli" in f for f in first), first

    me.say("oh wait, she lives in salerno now, not napoli")
    current = wait_for(
        lambda: any("Salerno" in f for f in me.facts_of(rosa["id"])) and me.facts_of(rosa["id"]),
        120,
    )
    assert not any("Napoli" in f for f in current), current
    assert any("88" in f for f in current), current  # the age is no part of the correction
    assert not any(word in f.lower() for f in current for word in ("wait", " now", "not ")), current
    where = f'subject_id = "{rosa["id"]}"'
    history = on_local_model.facts(me.user, where, history=True)
    closed = [f for f in history if not f["current"] and "Napoli" in f["text"]]
    assert closed and all(f["valid_to"] for f in closed), history
    assert me.person("Rosa")["id"] == rosa["id"]  # the same person, not a second Rosa
    assert "Salerno" in me.say("where does rosa live?")["reply"]["text"]
    me.memory("DELETE", "/v1/account", confirm="true")


@pytest.mark.timeout(900)
def test_a_new_job_supersedes_the_old_one(on_local_model: Served) -> None:  # noqa: F811
    """ "Bernd is a butcher" closes "Bernd is a baker in Hamburg" (the job slot), history kept.
    (A lone new name is asked about before it is stored: the friend is introduced first.)"""
    me = Chat(on_local_model)
    me.say("my friend Bernd is a baker in Hamburg")
    bernd = wait_for(lambda: me.person("Bernd"), seconds=120)
    wait_for(lambda: any("baker" in f for f in me.facts_of(bernd["id"])), 60)
    me.say("Bernd is a butcher")
    current = wait_for(
        lambda: any("butcher" in f for f in me.facts_of(bernd["id"])) and me.facts_of(bernd["id"]),
        120,
    )
    assert not any("baker" in f for f in current), current
    history = on_local_model.facts(me.user, f'subject_id = "{bernd["id"]}"', history=True)
    closed = [f for f in history if not f["current"] and "baker" in f["text"]]
    assert closed and all(f["valid_to"] for f in closed), history
    me.memory("DELETE", "/v1/account", confirm="true")
