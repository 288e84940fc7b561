"""Agent jobs: ``functions/agents`` runs a job's subtasks under a supervisor policy.

- ``delivery``: the Pub/Sub push handler's service (claim, run, report; at-least-once).
- ``claims``: the job document under a lease; ``supervisor``: the DAG on a thread pool, the
  failure threshold, mailbox, recruitment, budget; ``loop``: one agent's steps with retries;
  ``watchdog``: the evaluation every N steps and its ladder; ``interrupts``: approvals,
  questions and escalations on the chat; ``reports``: progress and results in the chat.
- ``continuation.continue_job``: the user's answer resumes the job; ``control``: pause,
  resume, cancel, take over.
"""
