"""The user's things over /v1 (calendar events, notes, expenses, budgets) on in-memory
stores: windows and months in the user's zone, word search, paging, deletion, refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.deps import Deps
from shared.models.agent_data import Budget, CalendarEvent, Expense, Note
from tests.unit.memory_calls import call, ok, refused

ALICE, BOB = "alice", "bob"
T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def events(deps: Deps, n: int) -> None:
    for i in range(n):
        start = T0 + timedelta(hours=i)
        deps.agent_data.put_event(
            ALICE,
            CalendarEvent(
                id=f"e{i}", title=f"meeting {i}", start=start, end=start + timedelta(hours=1),
                created_at=T0,
            ),
        )  # fmt: skip


def test_calendar_events_in_a_window_page_by_start(deps: Deps) -> None:
    events(deps, 5)
    window = {"start": "2026-11-21T00:00:00Z", "end": "2026-11-22T00:00:00Z"}
    first = ok(deps, ALICE, "GET", "/v1/calendarEvents", page_size=3, **window)
    assert [e["id"] for e in first["calendar_events"]] == ["e0", "e1", "e2"]
    rest = ok(
        deps, ALICE, "GET", "/v1/calendarEvents", page_token=first["next_page_token"], **window
    )
    assert ([e["id"] for e in rest["calendar_events"]], rest["next_page_token"]) == (
        ["e3", "e4"],
        "",
    )
    assert ok(deps, BOB, "GET", "/v1/calendarEvents", **window)["calendar_events"] == []


def test_a_reversed_or_long_window_is_400(deps: Deps) -> None:
    reversed_ = {"start": "2026-11-22T00:00:00Z", "end": "2026-11-21T00:00:00Z"}
    assert refused(deps, ALICE, "GET", "/v1/calendarEvents", **reversed_) == (
        400,
        "invalid_request",
    )
    long = {"start": "2026-01-01T00:00:00Z", "end": "2026-06-01T00:00:00Z"}
    assert refused(deps, ALICE, "GET", "/v1/calendarEvents", **long)[0] == 400
    assert refused(deps, ALICE, "GET", "/v1/calendarEvents")[0] == 400  # no window


def test_notes_list_newest_first_and_search_by_words(deps: Deps) -> None:
    for i, (title, text) in enumerate([("groceries", "oat milk, bread"), ("trip", "Rome in May")]):
        deps.agent_data.put_note(
            ALICE, Note(id=f"n{i}", title=title, text=text, created_at=T0 + timedelta(minutes=i))
        )
    assert [n["id"] for n in ok(deps, ALICE, "GET", "/v1/notes")["notes"]] == ["n1", "n0"]
    found = ok(deps, ALICE, "GET", "/v1/notes", query="OAT milk")["notes"]
    assert [n["title"] for n in found] == ["groceries"]


def test_expenses_of_a_month_count_in_the_users_zone(deps: Deps) -> None:
    # 23:30 UTC on 31 October is already 1 November in Zurich.
    evening = datetime(2026, 10, 31, 23, 30, tzinfo=UTC)
    deps.agent_data.put_expense(
        ALICE,
        Expense(id="x1", amount_minor=1250, currency="CHF", category="food", spent_at=evening,
                created_at=T0),
    )  # fmt: skip
    in_zurich = ok(deps, ALICE, "GET", "/v1/expenses", month="2026-11", time_zone="Europe/Zurich")
    assert [e["amount_minor"] for e in in_zurich["expenses"]] == [1250]
    assert ok(deps, ALICE, "GET", "/v1/expenses", month="2026-11")["expenses"] == []
    assert refused(deps, ALICE, "GET", "/v1/expenses", month="2026-13")[0] == 400
    assert (
        refused(deps, ALICE, "GET", "/v1/expenses", month="2026-11", time_zone="Mars/Base")[0]
        == 400
    )


def test_budgets_list_by_category(deps: Deps) -> None:
    for category in ("travel", "food"):
        deps.agent_data.put_budget(
            ALICE,
            Budget(category=category, currency="CHF", monthly_limit_minor=50000, updated_at=T0),
        )
    assert [b["category"] for b in ok(deps, ALICE, "GET", "/v1/budgets")["budgets"]] == [
        "food",
        "travel",
    ]


def test_a_delete_removes_once_and_another_users_id_is_404(deps: Deps) -> None:
    events(deps, 1)
    assert refused(deps, BOB, "DELETE", "/v1/calendarEvents/e0") == (404, "not_found")
    assert ok(deps, ALICE, "DELETE", "/v1/calendarEvents/e0") == {"deleted": True}
    assert refused(deps, ALICE, "DELETE", "/v1/calendarEvents/e0") == (404, "not_found")
    assert refused(deps, ALICE, "DELETE", "/v1/notes/bad%20id")[0] == 400
    assert call(deps, ALICE, "PUT", "/v1/expenses/x1").status == 405


def test_a_note_is_edited_with_its_etag_and_a_stale_one_changes_nothing(deps: Deps) -> None:
    note = Note(id="n1", title="groceries", text="oat milk", created_at=T0)
    deps.agent_data.put_note(ALICE, note)
    [listed] = ok(deps, ALICE, "GET", "/v1/notes")["notes"]
    edited = ok(
        deps, ALICE, "PATCH", "/v1/notes/n1", {"text": "oat milk, bread", "etag": listed["etag"]}
    )
    assert (edited["title"], edited["text"]) == ("groceries", "oat milk, bread")
    assert edited["etag"] != listed["etag"]
    stale = {"title": "shopping", "etag": listed["etag"]}
    assert refused(deps, ALICE, "PATCH", "/v1/notes/n1", stale) == (412, "stale_etag")
    assert deps.agent_data.get_note(ALICE, "n1") == note.model_copy(
        update={"text": "oat milk, bread"}
    )
    assert refused(deps, BOB, "PATCH", "/v1/notes/n1", {"title": "x"}) == (404, "not_found")
    assert refused(deps, ALICE, "PATCH", "/v1/notes/n1", {"text": ""})[0] == 400


def test_a_calendar_entry_is_moved_with_its_etag_and_never_to_end_before_it_starts(
    deps: Deps,
) -> None:
    events(deps, 1)
    path = "/v1/calendarEvents/e0"
    window = {"start": "2026-11-21T00:00:00Z", "end": "2026-11-22T00:00:00Z"}
    [listed] = ok(deps, ALICE, "GET", "/v1/calendarEvents", **window)["calendar_events"]
    backwards = {"end": "2026-11-21T11:00:00Z", "etag": listed["etag"]}
    assert refused(deps, ALICE, "PATCH", path, backwards) == (400, "invalid_request")
    moved = {"start": "2026-11-21T14:00:00Z", "end": "2026-11-21T15:30:00Z", "location": "Bern"}
    edited = ok(deps, ALICE, "PATCH", path, {**moved, "etag": listed["etag"]})
    assert (edited["start"], edited["location"]) == ("2026-11-21T14:00:00Z", "Bern")
    stale = {"title": "x", "etag": listed["etag"]}
    assert refused(deps, ALICE, "PATCH", path, stale) == (412, "stale_etag")
    stored = deps.agent_data.get_event(ALICE, "e0")
    assert stored is not None and stored.title == "meeting 0" and stored.location == "Bern"
