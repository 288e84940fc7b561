"""Reminders that ring: when (``timing``: zones, recurrence, snooze), and the delivery task
that rings them (``schedule``)."""
