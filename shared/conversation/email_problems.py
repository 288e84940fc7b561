"""What the user is told about an email sent for them that failed or may not have gone out,
in plain words: what happened, what the relay said, what to do. The chat notice and the
inbox's ``email_failed`` notification say the same."""

from __future__ import annotations

from shared.models.agent_data import SentMessage


def email_problem_text(record: SentMessage) -> str:
    """Plain words for a person: what happened, what the relay said, what to do."""
    to = ", ".join(record.message.to)
    subject = record.message.subject
    said = f" The mail server said: {record.relay_reply}" if record.relay_reply else ""
    if record.status == "failed":
        return (
            f"Your email “{subject}” to {to} was not sent.{said} "
            "Nothing went out; ask me again to retry."
        )
    return (
        f"I cannot tell whether your email “{subject}” to {to} went out: the mail server "
        f"stopped answering after receiving it.{said} I will not send it again by myself; "
        "check with the recipient before asking me to resend."
    )
