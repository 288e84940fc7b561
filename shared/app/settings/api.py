"""The user's control over their memory: what the ``memory`` function calls, one part per
resource of ``/v1`` (docs/api.md): facts, persons, pending items, the account (export,
erasure), the assistant profile, the human-in-the-loop settings and the calendar feed
(singletons), the learned strategies, and the things the agents recorded (events, notes,
expenses, budgets). ``shared.app.settings.routes`` maps each method and path to a part.

Whatever changes facts, persons or the profile drops the user's cached turn context
(``invalidate_context``), so the next turn reloads it. Every call is scoped to the
authenticated ``user_id``: another user's fact or person id is answered exactly like a
missing one (404 ``not_found``), and nothing is changed. Retries: edits, merges and
deletions either repeat harmlessly or answer 404/409/412 once done; splits and pending
answers derive their ids and task keys from the request, so a retry after a partial failure
completes the first attempt instead of doing it twice.
"""

from __future__ import annotations

from shared.app.settings.account import AccountAdmin
from shared.app.settings.calendar_feed import CalendarFeedAdmin
from shared.app.settings.facts import FactAdmin
from shared.app.settings.hitl import HitlAdmin
from shared.app.settings.needs import SettingsPorts
from shared.app.settings.notifications import NotificationSettingsAdmin
from shared.app.settings.pending import PendingAdmin
from shared.app.settings.persons import PersonAdmin
from shared.app.settings.profile import ProfileAdmin
from shared.app.settings.strategies import StrategyAdmin
from shared.app.settings.things import ThingsAdmin


class SettingsApi:
    def __init__(self, deps: SettingsPorts) -> None:
        self.facts = FactAdmin(deps)
        self.persons = PersonAdmin(deps)
        self.pending = PendingAdmin(deps)
        self.account = AccountAdmin(deps)
        self.profile = ProfileAdmin(deps)
        self.hitl = HitlAdmin(deps)
        self.strategies = StrategyAdmin(deps)
        self.calendar_feed = CalendarFeedAdmin(deps)
        self.things = ThingsAdmin(deps)
        self.notifications = NotificationSettingsAdmin(deps.notifications, deps.clock)
