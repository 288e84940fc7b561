"""The deterministic front desk: the feedback agent records what the user says about the
assistant (no model call), and the greeting agent answers with the greeting rule.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from shared.agents.spec import AgentInput, AgentOutput, ToolContext
from shared.agents.tools.common import ToolBase, result
from shared.conversation.greetings import greeting_reply  # a pure rule module, no graph
from shared.models.agent_data import Feedback
from shared.models.base import Strict

FeedbackText = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)
]
THANKS = "Thank you for your feedback. I have recorded it so it can be looked at."


class RecordFeedbackArgs(Strict):
    text: FeedbackText
    rating: int | None = Field(default=None, ge=1, le=5)


class RecordFeedback(ToolBase[RecordFeedbackArgs]):
    name = "feedback_record"
    description = "Record the user's feedback about the assistant (text, optional 1-5 rating)."
    args_schema = RecordFeedbackArgs
    acts = True

    def call(self, context: ToolContext, args: RecordFeedbackArgs) -> str:
        return result(feedback_id=self.record(context, args).id)

    def record(self, context: ToolContext, args: RecordFeedbackArgs) -> Feedback:
        feedback = Feedback(
            id=context.record_id("feedback"),
            text=args.text,
            rating=args.rating,
            chat_id=context.chat_id or None,
            created_at=context.ports.clock.now(),
        )
        context.ports.agent_data.put_feedback(context.user_id, feedback)
        return feedback


def respond_feedback(context: ToolContext, inputs: AgentInput) -> AgentOutput:
    """The feedback agent: the goal is the feedback; recorded once per job (its id is the
    job's), acknowledged with a fixed text."""
    feedback = RecordFeedback().record(context, RecordFeedbackArgs(text=inputs.goal))
    return AgentOutput(text=THANKS, data={"feedback_id": feedback.id})


def respond_greeting(context: ToolContext, inputs: AgentInput) -> AgentOutput:
    """The greeting agent: the turn's greeting rule, in the language greeted in."""
    return AgentOutput(text=greeting_reply(inputs.goal))
