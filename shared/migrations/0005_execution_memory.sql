-- The supervisor's memory of past executions (issue 13): one row per finished agent job,
-- and the user's feedback against the strategies the jobs ran.
--
-- What the user wrote (the request, the plan's goals, failure messages) is AES-256-GCM
-- ciphertext under the user's data key, like the facts; both tables reference user_keys ON
-- DELETE CASCADE, so erasing the account (or only its key) erases them.
CREATE TABLE executions (
    id               uuid PRIMARY KEY,
    user_id          text NOT NULL REFERENCES user_keys (user_id) ON DELETE CASCADE,
    job_id           text NOT NULL,
    -- the plan this run ran: its own new one, or an earlier run's that it adapted
    strategy_id      text NOT NULL,
    request_enc      bytea NOT NULL,
    plan_enc         bytea NOT NULL,      -- JSON list of steps: id, agent, goal, depends_on, role
    failures_enc     bytea NOT NULL,      -- JSON list of failed subtasks with their errors
    outcome          text NOT NULL
                     CHECK (outcome IN ('done', 'partial', 'aborted', 'escalated', 'cancelled')),
    subtasks         integer NOT NULL CHECK (subtasks >= 1),
    retries          integer NOT NULL CHECK (retries >= 0),
    duration_ms      bigint NOT NULL CHECK (duration_ms >= 0),
    tokens           integer NOT NULL CHECK (tokens >= 0),
    -- no fixed dimension, like facts.embedding: a change of embedding model needs no table
    -- rewrite; a search compares only vectors of its own model and dimension
    embedding        vector NOT NULL,
    embedding_model  text NOT NULL,
    embedding_dim    integer NOT NULL,
    created_at       timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    -- one row per job: a redelivered job's second record does nothing
    CONSTRAINT executions_user_job_key UNIQUE (user_id, job_id),
    CONSTRAINT executions_embedding_dim CHECK (vector_dims(embedding) = embedding_dim),
    CONSTRAINT executions_expiry CHECK (expires_at > created_at)
);

-- A user keeps tens to hundreds of runs (they expire): the search reads that user's rows
-- through this index and computes exact distances, no approximate index is needed.
CREATE INDEX executions_user_strategy_idx ON executions (user_id, strategy_id);
CREATE INDEX executions_expires_at_idx ON executions (expires_at);

-- The user's word against a strategy (a refused step, "that was wrong"), once per key (the
-- turn or interrupt that said it). Not tied to a run: a plan refused before any job ran is
-- still marked down. Forgetting a strategy deletes its rows with its runs.
CREATE TABLE strategy_feedback (
    user_id      text NOT NULL REFERENCES user_keys (user_id) ON DELETE CASCADE,
    key          text NOT NULL,
    strategy_id  text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('rejected_step', 'wrong')),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (user_id, key)
);

CREATE INDEX strategy_feedback_strategy_idx ON strategy_feedback (user_id, strategy_id);
CREATE INDEX strategy_feedback_expires_at_idx ON strategy_feedback (expires_at);
