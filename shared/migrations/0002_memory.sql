-- The fact system, encrypted at rest (issue 4).
--
-- Text a user wrote (fact text, temporal markers, person names, aliases, descriptors, pending
-- items) is stored only as AES-256-GCM ciphertext under the user's data key (shared/crypto.py);
-- there is no column left that could hold it in clear. Lookups use embeddings and keyed
-- hashes (HMAC under the user's key) of normalised names and idempotency keys.
--
-- 0001 stored plaintext that SQL cannot encrypt (the keys live in the application), and no
-- production data exists yet: persons and facts are recreated, dev rows are dropped.

DROP TABLE facts;
DROP TABLE persons;

-- One data key per user, wrapped by the key-encryption key (Cloud KMS; a key file in dev).
-- Every table holding ciphertext references it ON DELETE CASCADE: no ciphertext can outlive
-- (or exist without) its key, and forgetting the key (crypto-shredding) erases the rows.
CREATE TABLE user_keys (
    user_id      text PRIMARY KEY,
    wrapped_key  bytea NOT NULL,
    kek_id       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE persons (
    id                uuid PRIMARY KEY,
    user_id           text NOT NULL REFERENCES user_keys (user_id) ON DELETE CASCADE,
    avatar_id         text,
    display_name_enc  bytea NOT NULL,
    aliases_enc       bytea NOT NULL,  -- JSON list of strings
    descriptors_enc   bytea NOT NULL,  -- JSON object of strings
    -- Keyed hashes of the normalised display name and aliases. An array in the row, not a
    -- side table: a person's names change in one UPDATE (rename, merge), nothing to keep in
    -- sync; a user has few persons, and the GIN index finds a hash without scanning them.
    -- The hash is keyed per user, so equal names of two users never collide.
    name_hashes       bytea[] NOT NULL DEFAULT '{}',
    role_to_user      text NOT NULL DEFAULT 'other' CHECK (role_to_user IN (
                          'partner', 'child', 'parent', 'sibling', 'friend', 'colleague',
                          'pet', 'service_provider', 'other')),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    -- target of the facts' (user_id, subject_entity_id) key: a fact can only name its own
    -- user's person; also serves lookups by user_id
    CONSTRAINT persons_user_id_id_key UNIQUE (user_id, id)
);

CREATE INDEX persons_name_hashes_idx ON persons USING gin (name_hashes);

CREATE TABLE facts (
    id                   uuid PRIMARY KEY,
    user_id              text NOT NULL REFERENCES user_keys (user_id) ON DELETE CASCADE,
    avatar_id            text,
    subject_entity_id    uuid,
    relation_to_user     text NOT NULL,
    text_enc             bytea NOT NULL,
    type                 text NOT NULL CHECK (type IN (
                             'Schedule', 'Travel', 'Health', 'Allergy', 'Medical',
                             'Relationship', 'Work', 'Hobby', 'Preference', 'Contact', 'Other')),
    -- double precision: a real 0.9 reads back as 0.8999999761 and fails the check below
    confidence           double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    scope                text NOT NULL CHECK (scope IN ('avatar', 'workspace')),
    durability           text NOT NULL CHECK (durability IN ('durable', 'long', 'medium', 'short')),
    sensitivity          text NOT NULL CHECK (sensitivity IN ('low', 'medium', 'high')),
    temporal_marker_enc  bytea,  -- "next Friday", as the user wrote it
    time_anchor          timestamptz,
    valid_from           timestamptz NOT NULL,
    valid_to             timestamptz,  -- set: superseded (history), no longer current
    supersedes_id        uuid,  -- the fact this one replaced: erasing a fact erases its history
    source_chat_id       text,
    source_turn_id       text,
    source_message_id    text,
    -- no fixed dimension, so a change of embedding model needs no table rewrite; each known
    -- dimension gets its own partial HNSW index below
    embedding            vector NOT NULL,
    embedding_model      text NOT NULL,
    embedding_dim        integer NOT NULL,
    -- HMAC of the caller's idempotency key under the user's key: callers derive keys from
    -- the text, which an unkeyed hash would let a dump confirm by guessing
    idempotency_hash     bytea NOT NULL,
    seen_count           integer NOT NULL DEFAULT 1 CHECK (seen_count >= 1),
    last_seen_at         timestamptz NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    CONSTRAINT facts_user_id_id_key UNIQUE (user_id, id),
    -- a fact is about the user, or about one of the user's persons: never about nobody
    CONSTRAINT facts_subject_or_self
        CHECK (subject_entity_id IS NOT NULL OR relation_to_user = 'self'),
    -- and never both: "self" with a person attached would be attributed twice
    CONSTRAINT facts_self_has_no_subject
        CHECK (subject_entity_id IS NULL OR relation_to_user <> 'self'),
    -- a closed vocabulary (the person's role), never free text a user wrote
    CONSTRAINT facts_relation_to_user_check CHECK (relation_to_user IN (
        'self', 'partner', 'child', 'parent', 'sibling', 'friend', 'colleague', 'pet',
        'service_provider', 'other')),
    CONSTRAINT facts_sensitive_confidence
        CHECK (type NOT IN ('Allergy', 'Medical', 'Health') OR confidence >= 0.9),
    CONSTRAINT facts_embedding_dim CHECK (vector_dims(embedding) = embedding_dim),
    CONSTRAINT facts_valid_period CHECK (valid_to IS NULL OR valid_to >= valid_from),
    CONSTRAINT facts_subject_fkey FOREIGN KEY (user_id, subject_entity_id)
        REFERENCES persons (user_id, id) ON DELETE CASCADE,
    CONSTRAINT facts_supersedes_fkey FOREIGN KEY (user_id, supersedes_id)
        REFERENCES facts (user_id, id) ON DELETE SET NULL (supersedes_id)
);

-- Vectors inline, not TOASTed: a 768-dimension vector (3 KB) would otherwise move out of the
-- heap, the planner would cost a scan by the (tiny) heap alone, and pick a sequential scan that
-- detoasts every vector over the HNSW index (measured: 80-150 ms instead of 1-3 ms at 20k
-- facts). MAIN still moves a row out of line as a last resort (more than ~2000 dimensions).
ALTER TABLE facts ALTER COLUMN embedding SET STORAGE MAIN;

-- A replacement may carry the idempotency key of the fact it supersedes: unique among the
-- current facts only. Inserts name this index: ON CONFLICT (user_id, idempotency_hash)
-- WHERE valid_to IS NULL DO NOTHING.
CREATE UNIQUE INDEX facts_current_idempotency_idx ON facts (user_id, idempotency_hash)
    WHERE valid_to IS NULL;
-- list_facts, delete_user; the leading user_id serves every per-user filter
CREATE INDEX facts_user_id_created_at_idx ON facts (user_id, created_at);
-- current_facts, merges, and the foreign key's cascade from persons
CREATE INDEX facts_user_subject_idx ON facts (user_id, subject_entity_id);
-- a fact's history, walked back from the current version
CREATE INDEX facts_user_supersedes_idx ON facts (user_id, supersedes_id)
    WHERE supersedes_id IS NOT NULL;
-- temporal retrieval: current facts anchored in a window
CREATE INDEX facts_user_time_anchor_idx ON facts (user_id, time_anchor)
    WHERE valid_to IS NULL AND time_anchor IS NOT NULL;

-- Semantic search over current facts, one index per dimension. Query with the same cast and
-- predicate: WHERE embedding_dim = 768 AND valid_to IS NULL ...
--           ORDER BY embedding::vector(768) <=> $1 LIMIT k
-- m = 16, ef_construction = 64 (pgvector's defaults) with hnsw.ef_search = 200 at query time
-- (postgres_fact_search): recall@10 0.99 at 100k facts of one user, p95 ~12 ms; see
-- bench/retrieval.py. The graph was left at the defaults: ef_search alone met the target.
CREATE INDEX facts_embedding_768_idx ON facts
    USING hnsw ((embedding::vector(768)) vector_cosine_ops) WITH (m = 16, ef_construction = 64)
    WHERE embedding_dim = 768 AND valid_to IS NULL;
CREATE INDEX facts_embedding_384_idx ON facts
    USING hnsw ((embedding::vector(384)) vector_cosine_ops) WITH (m = 16, ef_construction = 64)
    WHERE embedding_dim = 384 AND valid_to IS NULL;

-- Facts held back for the user's answer: which person is meant (disambiguation), or which
-- of two facts holds (fact_conflict). The mention, candidates, proposed person and the
-- drafted facts are one encrypted JSON payload.
CREATE TABLE pending_items (
    id                   uuid PRIMARY KEY,
    user_id              text NOT NULL REFERENCES user_keys (user_id) ON DELETE CASCADE,
    chat_id              text,
    kind                 text NOT NULL CHECK (kind IN ('disambiguation', 'fact_conflict')),
    payload_enc          bytea NOT NULL,
    conflicting_fact_id  uuid,
    created_at           timestamptz NOT NULL,
    resolved_at          timestamptz,
    -- the user's own fact only; erasing it keeps the held-back facts, without the conflict
    CONSTRAINT pending_items_conflicting_fact_fkey FOREIGN KEY (user_id, conflicting_fact_id)
        REFERENCES facts (user_id, id) ON DELETE SET NULL (conflicting_fact_id)
);

CREATE INDEX pending_items_open_idx ON pending_items (user_id, chat_id, created_at)
    WHERE resolved_at IS NULL;
CREATE INDEX pending_items_conflicting_fact_idx ON pending_items (user_id, conflicting_fact_id)
    WHERE conflicting_fact_id IS NOT NULL;
