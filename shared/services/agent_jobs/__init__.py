"""Agent jobs: a job's subtasks run under a supervisor policy.

- ``claims``: the job document under a lease; ``supervisor``: the DAG on a thread pool, the
  failure threshold, mailbox, recruitment, budget; ``loop``: one agent's steps with retries;
  ``watchdog``: the evaluation every N steps and its ladder; ``interrupts``: approvals,
  questions and escalations on the chat; ``reports``: progress and results in the chat.
- What the functions call sits above: ``shared.app.agent_delivery`` (the Pub/Sub push),
  ``shared.app.agent_continuation`` (an answer resumes the job) and
  ``shared.app.agent_control`` (pause, resume, cancel, take over).
"""
