-- First version of the fact system: people the user mentions, facts about them or the user,
-- and the extraction tasks already applied (so a redelivered task writes nothing).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE persons (
    id            uuid PRIMARY KEY,
    user_id       text NOT NULL,
    avatar_id     text,
    display_name  text NOT NULL,
    role_to_user  text NOT NULL DEFAULT 'other' CHECK (role_to_user IN (
                      'partner', 'child', 'parent', 'sibling', 'friend', 'colleague',
                      'pet', 'service_provider', 'other')),
    aliases       text[] NOT NULL DEFAULT '{}',
    descriptors   jsonb NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    -- target of the facts' (user_id, subject_entity_id) key: a fact can only name its own
    -- user's person; also serves lookups by user_id
    CONSTRAINT persons_user_id_id_key UNIQUE (user_id, id)
);

CREATE TABLE facts (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id            text NOT NULL,
    avatar_id          text,
    subject_entity_id  uuid,
    relation_to_user   text NOT NULL,
    text               varchar(200) NOT NULL,
    type               text NOT NULL DEFAULT 'Other' CHECK (type IN (
                           'Schedule', 'Travel', 'Health', 'Allergy', 'Medical', 'Relationship',
                           'Work', 'Hobby', 'Preference', 'Contact', 'Other')),
    confidence         real NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    scope              text NOT NULL DEFAULT 'avatar',
    durability         text,
    sensitivity        text NOT NULL DEFAULT 'low' CHECK (sensitivity IN ('low', 'medium', 'high')),
    temporal_marker    text,
    time_anchor        timestamptz,
    valid_from         timestamptz NOT NULL DEFAULT now(),
    valid_to           timestamptz,
    source_chat_id     text,
    source_turn_id     text,
    source_message_id  text,
    -- no fixed dimension, so a change of embedding model needs no table rewrite; each known
    -- dimension gets its own partial HNSW index below
    embedding          vector NOT NULL,
    embedding_model    text NOT NULL,
    embedding_dim      integer NOT NULL,
    idempotency_key    text NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT facts_user_idempotency_key UNIQUE (user_id, idempotency_key),
    -- a fact is about the user, or about one of the user's persons: never about nobody
    CONSTRAINT facts_subject_or_self
        CHECK (subject_entity_id IS NOT NULL OR relation_to_user = 'self'),
    CONSTRAINT facts_sensitive_confidence
        CHECK (type NOT IN ('Allergy', 'Medical', 'Health') OR confidence >= 0.9),
    CONSTRAINT facts_embedding_dim CHECK (vector_dims(embedding) = embedding_dim),
    CONSTRAINT facts_valid_period CHECK (valid_to IS NULL OR valid_to > valid_from),
    CONSTRAINT facts_subject_fkey FOREIGN KEY (user_id, subject_entity_id)
        REFERENCES persons (user_id, id) ON DELETE CASCADE
);

CREATE INDEX facts_user_id_created_at_idx ON facts (user_id, created_at);
CREATE INDEX facts_subject_entity_id_idx ON facts (subject_entity_id)
    WHERE subject_entity_id IS NOT NULL;

-- Query with the same cast and predicate, e.g.
--   WHERE embedding_dim = 768 ORDER BY embedding::vector(768) <=> $1 LIMIT k
CREATE INDEX facts_embedding_768_idx ON facts
    USING hnsw ((embedding::vector(768)) vector_cosine_ops) WHERE embedding_dim = 768;
CREATE INDEX facts_embedding_384_idx ON facts
    USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE embedding_dim = 384;

CREATE TABLE processed_tasks (
    task_key      text PRIMARY KEY,
    user_id       text NOT NULL,
    processed_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX processed_tasks_user_id_idx ON processed_tasks (user_id);
