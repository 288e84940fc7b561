-- Accounts erased at the user's request. Work queued before the erasure (a delayed or
-- retried extraction task) must not bring any of their data back, so extraction checks this
-- table under the same per-user lock as the erasure. Only a hash of the user id is kept.
CREATE TABLE erased_users (
    user_hash  bytea PRIMARY KEY,
    erased_at  timestamptz NOT NULL
);
