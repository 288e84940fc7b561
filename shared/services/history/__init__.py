"""Learning from history: the supervisor's memory of past executions and the decomposition
advisor that reads it.

- ``recorder``: one execution per finished job (request, plan, outcome, failures, retries,
  duration, tokens), written once; ``shape``: what a request is compared by (entities and
  figures masked) and how a past plan is adapted to a new request; ``scoring``: a
  strategy's confidence from similarity, success rate and recency; ``advisor``: the
  suggestion the planner asks for before its model call, and the user's feedback;
  ``prompts``: the example and the warnings the planner's prompt carries; ``strategies``:
  what the settings API lists.
- Callers sit above: the turn graph's planner (``shared.graph.plan_history``), the job
  runner's end (``shared.app.agent_delivery``), the settings API
  (``shared.app.settings.strategies``) and the account's export and erasure.
"""
