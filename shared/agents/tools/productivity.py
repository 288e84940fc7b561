"""Productivity tools: reminders, calendar events, notes, email drafts and sending.

``email_send`` is the one sensitive tool: it runs only once the user approved it, with the
approval's idempotency key, so a redelivered job cannot send the message twice.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import AwareDatetime, Field, model_validator

from shared.agents.spec import ToolContext, ToolRefused
from shared.agents.tools.common import ToolBase, result
from shared.errors import AppError, BadRequest
from shared.models.agent_data import (
    MAX_EVENT_DAYS,
    CalendarEvent,
    EmailAddress,
    Note,
    NoteText,
    OutboundEmail,
    RecordId,
    ShortText,
)
from shared.models.base import Strict
from shared.models.notify_api import NewReminder

GRACE = timedelta(minutes=5)  # "remind me now" is not in the past
SOON = timedelta(seconds=30)
HORIZON = timedelta(days=3660)  # nothing is planned more than ten years ahead
MAX_WINDOW = timedelta(days=92)
NOTE_EXCERPT = 300


# -- reminders ----------------------------------------------------------------------------
class AddReminderArgs(Strict):
    text: ShortText
    due_at: AwareDatetime
    time_zone: str = Field(default="", max_length=64)  # "": the user's
    recurrence: str = Field(default="", max_length=500)  # an RFC 5545 RRULE, "" for once
    urgent: bool = False


class ListRemindersArgs(Strict):
    include_done: bool = False
    limit: int = Field(default=20, ge=1, le=50)


class CompleteReminderArgs(Strict):
    reminder_id: RecordId


class AddReminder(ToolBase[AddReminderArgs]):
    name = "reminders_add"
    description = (
        "Add a reminder for the user at a time (ISO 8601 with offset); optionally repeating "
        "(an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=MO) in the user's time zone."
    )
    args_schema = AddReminderArgs
    acts = True

    def call(self, context: ToolContext, args: AddReminderArgs) -> str:
        now = context.ports.clock.now()
        due_at = args.due_at
        if now - GRACE <= due_at <= now:  # "remind me now" rings now, not never
            due_at = now + SOON
        time_zone = args.time_zone or context.ports.profiles.get_profile(context.user_id).timezone
        new = NewReminder(text=args.text, due_at=due_at, time_zone=time_zone,
                          recurrence=args.recurrence, urgent=args.urgent)  # fmt: skip
        try:
            reminder = context.ports.reminder_book.add(
                context.user_id, context.record_id("reminder"), new
            )
        except BadRequest as error:
            raise ToolRefused(f"reminders_add: {error.message}") from error
        return result(reminder=reminder)


class ListReminders(ToolBase[ListRemindersArgs]):
    name = "reminders_list"
    description = "List the user's reminders, earliest due first (open ones unless asked)."
    args_schema = ListRemindersArgs

    def call(self, context: ToolContext, args: ListRemindersArgs) -> str:
        found = context.ports.reminder_book.listed(
            context.user_id, args.limit, include_done=args.include_done
        )
        return result(reminders=found)


class CompleteReminder(ToolBase[CompleteReminderArgs]):
    name = "reminders_complete"
    description = "Mark one of the user's reminders done, by its id."
    args_schema = CompleteReminderArgs
    acts = True

    def call(self, context: ToolContext, args: CompleteReminderArgs) -> str:
        try:
            done = context.ports.reminder_book.complete(context.user_id, args.reminder_id)
        except AppError as error:
            raise ToolRefused(f"reminders_complete: {error.message}") from error
        if done is None:
            raise ToolRefused(f"reminders_complete: no reminder {args.reminder_id}")
        return result(reminder=done)


# -- calendar -----------------------------------------------------------------------------
class AddEventArgs(Strict):
    title: ShortText
    start: AwareDatetime
    end: AwareDatetime
    location: ShortText | None = None

    @model_validator(mode="after")
    def _sane_span(self) -> AddEventArgs:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        if (self.end - self.start).days >= MAX_EVENT_DAYS:
            raise ValueError(f"an event lasts less than {MAX_EVENT_DAYS} days")
        return self


class ListEventsArgs(Strict):
    start: AwareDatetime
    end: AwareDatetime
    limit: int = Field(default=20, ge=1, le=50)

    @model_validator(mode="after")
    def _bounded_window(self) -> ListEventsArgs:
        if not self.start < self.end <= self.start + MAX_WINDOW:
            raise ValueError(f"end must be after start, by at most {MAX_WINDOW.days} days")
        return self


class AddEvent(ToolBase[AddEventArgs]):
    name = "calendar_add"
    description = "Put an event in the user's calendar (start and end in ISO 8601 with offset)."
    args_schema = AddEventArgs
    acts = True

    def call(self, context: ToolContext, args: AddEventArgs) -> str:
        now = context.ports.clock.now()
        if args.end < now - GRACE or args.start > now + HORIZON:
            raise ToolRefused("calendar_add: the event is over, or more than ten years ahead")
        event = CalendarEvent(id=context.record_id("event"), **args.model_dump(), created_at=now)
        context.ports.agent_data.put_event(context.user_id, event)
        return result(event=event)


class ListEvents(ToolBase[ListEventsArgs]):
    name = "calendar_list"
    description = "List the user's calendar events starting in [start, end), at most 92 days."
    args_schema = ListEventsArgs

    def call(self, context: ToolContext, args: ListEventsArgs) -> str:
        found = context.ports.agent_data.list_events(
            context.user_id, args.start, args.end, args.limit
        )
        return result(events=found)


# -- notes --------------------------------------------------------------------------------
class AddNoteArgs(Strict):
    title: ShortText
    text: NoteText


class SearchNotesArgs(Strict):
    query: str = Field(min_length=1, max_length=200, pattern=r"\S")
    limit: int = Field(default=5, ge=1, le=20)


class AddNote(ToolBase[AddNoteArgs]):
    name = "notes_add"
    description = "Save a note (title and text) for the user."
    args_schema = AddNoteArgs
    acts = True

    def call(self, context: ToolContext, args: AddNoteArgs) -> str:
        note = Note(
            id=context.record_id("note"),
            title=args.title,
            text=args.text,
            created_at=context.ports.clock.now(),
        )
        context.ports.agent_data.put_note(context.user_id, note)
        return result(note={"id": note.id, "title": note.title})


class SearchNotes(ToolBase[SearchNotesArgs]):
    name = "notes_search"
    description = "Search the user's notes and documents: all words must appear; newest first."
    args_schema = SearchNotesArgs

    def call(self, context: ToolContext, args: SearchNotesArgs) -> str:
        found = context.ports.agent_data.search_notes(context.user_id, args.query, args.limit)
        return result(
            notes=[
                {
                    "id": note.id,
                    "title": note.title,
                    "created_at": note.created_at,
                    "excerpt": note.text[:NOTE_EXCERPT],
                }
                for note in found
            ]
        )


# -- email --------------------------------------------------------------------------------
class EmailArgs(Strict):
    to: list[EmailAddress] = Field(min_length=1, max_length=10)
    subject: ShortText
    body: str = Field(min_length=1, max_length=10000)


class DraftEmail(ToolBase[EmailArgs]):
    name = "email_draft"
    description = "Prepare an email for the user to read; sends nothing."
    args_schema = EmailArgs

    def call(self, context: ToolContext, args: EmailArgs) -> str:
        return result(draft=OutboundEmail(**args.model_dump()), sent=False)


class SendEmail(ToolBase[EmailArgs]):
    name = "email_send"
    description = "Send an email on the user's behalf (asks the user first)."
    args_schema = EmailArgs
    acts = True
    sensitive = True

    def call(self, context: ToolContext, args: EmailArgs) -> str:
        key = context.idempotency_key
        if not key:  # run() checks it too: never sent without the approval's key
            raise ToolRefused("email_send: runs only once approved")
        sent = context.ports.outbox.send(context.user_id, OutboundEmail(**args.model_dump()), key)
        return result(
            sent={"id": sent.id, "to": sent.message.to, "subject": sent.message.subject},
            sent_at=sent.sent_at,
        )
