"""AgentDataStore contract, what the client's views add: the newest notes, and deleting an
event, a note or an expense (the fake and Firestore behave the same)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shared.ports import AgentDataStore
from tests.contract.test_agent_data import NOW, at, event, expense, note


def test_notes_list_newest_first_up_to_the_limit(agent_data: AgentDataStore, user_id: str) -> None:
    for minutes, nid in enumerate(["n1", "n2", "n3"]):
        agent_data.put_note(user_id, note(nid, f"title {nid}", "text", minutes))
    assert [n.id for n in agent_data.list_notes(user_id, 2)] == ["n3", "n2"]
    assert agent_data.get_note(user_id, "n1") == note("n1", "title n1", "text", 0)
    assert agent_data.get_note("someone-else", "n1") is None
    assert agent_data.list_notes("someone-else", 10) == []
    with pytest.raises(ValueError):
        agent_data.list_notes(user_id, 0)


def test_a_deleted_record_is_gone_and_a_second_delete_finds_nothing(
    agent_data: AgentDataStore, user_id: str
) -> None:
    agent_data.put_event(user_id, event("e1", 1))
    assert agent_data.get_event(user_id, "e1") == event("e1", 1)
    assert agent_data.get_event("someone-else", "e1") is None
    agent_data.put_note(user_id, note("n1", "groceries", "oat milk", 0))
    agent_data.put_expense(user_id, expense("x1", 1250, "food", 1))
    assert agent_data.delete_record(user_id, "events", "e1") is True
    assert agent_data.delete_record(user_id, "notes", "n1") is True
    assert agent_data.delete_record(user_id, "expenses", "x1") is True
    assert agent_data.list_events(user_id, NOW, at(48), 10) == []
    assert agent_data.list_notes(user_id, 10) == []
    assert agent_data.list_expenses(user_id, NOW, NOW + timedelta(days=2), 10) == []
    assert agent_data.delete_record(user_id, "events", "e1") is False


def test_another_users_record_is_not_deleted(agent_data: AgentDataStore, user_id: str) -> None:
    agent_data.put_expense(user_id, expense("x1", 1250, "food", 1))
    assert agent_data.delete_record("someone-else", "expenses", "x1") is False
    assert [e.id for e in agent_data.list_expenses(user_id, NOW, at(48), 10)] == ["x1"]
