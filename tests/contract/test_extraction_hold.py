"""``FactStore.hold_user``: extractions of one user run one at a time (so the person the
first creates is found by the second, not made twice), another user's do not wait."""

from __future__ import annotations

import threading

from tests.contract.conftest import FactBackend, unique

WAIT = 10.0  # seconds; generous for a loaded machine, never reached when the rule holds


def _second_holder(backend: FactBackend, user: str, inside: threading.Event) -> threading.Thread:
    def hold() -> None:
        with backend.facts.hold_user(user):
            inside.set()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread


def test_holders_of_one_user_run_one_at_a_time(fact_backend: FactBackend) -> None:
    user, inside = unique("user"), threading.Event()
    with fact_backend.facts.hold_user(user):
        second = _second_holder(fact_backend, user, inside)
        assert not inside.wait(0.5)  # the second waits for the first
    assert inside.wait(WAIT)
    second.join(WAIT)


def test_another_users_holder_does_not_wait(fact_backend: FactBackend) -> None:
    inside = threading.Event()
    with fact_backend.facts.hold_user(unique("user")):
        second = _second_holder(fact_backend, unique("user"), inside)
        assert inside.wait(WAIT)
    second.join(WAIT)
