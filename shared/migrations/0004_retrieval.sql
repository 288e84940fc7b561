-- Retrieval that earns its boosts, and memory that ages (issue 15).
--
-- 1. A keyword channel over encrypted text: a blind index. Each fact keeps the keyed hashes
--    of its normalised terms (shared/conversation/terms.py; HMAC under the user's data key,
--    the first 8 bytes as a bigint), never the words. Equal words of one user hash equally
--    (that is the index), equal words of two users do not. The per-user document frequencies
--    BM25 needs are counted by triggers, so a search reads them in O(query terms).
-- 2. Expiry: a fact of durability short/medium/long leaves retrieval at expires_at (set by the
--    application from last_seen_at or its time anchor) and is closed by a scheduled job with
--    valid_to = expires_at, ended_by = 'expired'. Nothing is deleted.
-- 3. Session memory: a chat's running summary, encrypted and embedded, one row per chat.

ALTER TABLE facts ADD COLUMN terms bigint[] NOT NULL DEFAULT '{}';
ALTER TABLE facts ADD COLUMN expires_at timestamptz;
ALTER TABLE facts ADD COLUMN ended_by text CHECK (ended_by IN ('superseded', 'expired'));

UPDATE facts SET ended_by = 'superseded' WHERE valid_to IS NOT NULL;
-- the lifetimes of shared/models/memory.py:LIFETIME_DAYS
UPDATE facts SET expires_at = greatest(last_seen_at, coalesce(time_anchor, last_seen_at))
    + make_interval(days => CASE durability WHEN 'short' THEN 7 WHEN 'medium' THEN 42
                                            ELSE 182 END)
    WHERE durability <> 'durable';

-- a closed version says why it ended; a current one does not
ALTER TABLE facts ADD CONSTRAINT facts_ended_by_closed CHECK ((ended_by IS NULL) = (valid_to IS NULL));
ALTER TABLE facts ADD CONSTRAINT facts_durable_never_expires
    CHECK (durability <> 'durable' OR expires_at IS NULL);

-- Keyword candidates of a search "as of" a past moment: the user's facts holding any of the
-- query's rarer terms. The hashes are keyed per user, so a lookup finds only the asking
-- user's rows (user_id is checked anyway).
CREATE INDEX facts_terms_idx ON facts USING gin (terms);

-- Keyword candidates of a search now: the current facts' terms, in narrow rows. A facts row
-- carries its vector inline (3 KB at 768 dimensions), so reading a few hundred of them to
-- score BM25 cost more than the whole dense search; these rows hold only what the keyword
-- channel filters and scores by. Kept by the triggers below, like the statistics.
CREATE TABLE fact_keywords (
    fact_id          uuid PRIMARY KEY,
    user_id          text NOT NULL,
    terms            bigint[] NOT NULL,
    sensitivity      text NOT NULL,
    embedding_model  text NOT NULL,
    embedding_dim    integer NOT NULL,
    expires_at       timestamptz
);
CREATE INDEX fact_keywords_terms_idx ON fact_keywords USING gin (terms);
-- The expiry job: current facts whose time ran out, oldest first.
CREATE INDEX facts_expiry_idx ON facts (expires_at) WHERE valid_to IS NULL AND expires_at IS NOT NULL;

-- Per-user BM25 statistics over the current facts: how many hold each term, how many facts
-- there are and how many terms they hold in all (the average length). No foreign key to
-- user_keys: the triggers below update these rows while a cascade from user_keys deletes the
-- facts, and a row counting zero facts is removed, so no row outlives the user's facts.
CREATE TABLE fact_terms (
    user_id  text NOT NULL,
    term     bigint NOT NULL,
    docs     integer NOT NULL,
    PRIMARY KEY (user_id, term)
);

CREATE TABLE fact_term_totals (
    user_id  text PRIMARY KEY,
    docs     integer NOT NULL,
    length   bigint NOT NULL
);

-- The change a statement made to the counts: +1 per current new row, -1 per current old row,
-- summed per (user, term); applied in key order so concurrent writers lock alike.
CREATE FUNCTION fact_terms_apply(changes jsonb) RETURNS void LANGUAGE sql AS $$
    WITH rows AS (
        SELECT (c->>'user_id') AS user_id, (c->>'sign')::int AS sign,
               ARRAY(SELECT jsonb_array_elements_text(c->'terms')::bigint) AS terms
        FROM jsonb_array_elements(changes) c
    ), per_term AS (
        SELECT r.user_id, t.term, sum(r.sign)::int AS docs
        FROM rows r CROSS JOIN LATERAL (SELECT DISTINCT unnest(r.terms) AS term) t
        GROUP BY r.user_id, t.term HAVING sum(r.sign) <> 0
    ), upserted AS (
        INSERT INTO fact_terms AS f (user_id, term, docs)
        SELECT user_id, term, docs FROM per_term ORDER BY user_id, term
        ON CONFLICT (user_id, term) DO UPDATE SET docs = f.docs + EXCLUDED.docs
        RETURNING 1
    ), per_user AS (
        SELECT user_id, sum(sign)::int AS docs, sum(sign * cardinality(terms))::bigint AS length
        FROM rows GROUP BY user_id
    )
    INSERT INTO fact_term_totals AS t (user_id, docs, length)
    SELECT user_id, docs, length FROM per_user WHERE docs <> 0 OR length <> 0 ORDER BY user_id
    ON CONFLICT (user_id) DO UPDATE
        SET docs = t.docs + EXCLUDED.docs, length = t.length + EXCLUDED.length;
    DELETE FROM fact_terms WHERE docs <= 0
        AND user_id IN (SELECT c->>'user_id' FROM jsonb_array_elements(changes) c);
    DELETE FROM fact_term_totals WHERE docs <= 0
        AND user_id IN (SELECT c->>'user_id' FROM jsonb_array_elements(changes) c);
$$;

CREATE FUNCTION fact_terms_track() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changes jsonb := '[]';
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM fact_keywords WHERE fact_id IN (SELECT id FROM old_rows);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO fact_keywords (fact_id, user_id, terms, sensitivity, embedding_model,
                                   embedding_dim, expires_at)
        SELECT id, user_id, terms, sensitivity, embedding_model, embedding_dim, expires_at
        FROM new_rows WHERE valid_to IS NULL AND cardinality(terms) > 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        changes := changes || coalesce((SELECT jsonb_agg(jsonb_build_object(
            'user_id', user_id, 'sign', 1, 'terms', to_jsonb(terms)))
            FROM new_rows WHERE valid_to IS NULL AND cardinality(terms) > 0), '[]');
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        changes := changes || coalesce((SELECT jsonb_agg(jsonb_build_object(
            'user_id', user_id, 'sign', -1, 'terms', to_jsonb(terms)))
            FROM old_rows WHERE valid_to IS NULL AND cardinality(terms) > 0), '[]');
    END IF;
    IF jsonb_array_length(changes) > 0 THEN
        PERFORM fact_terms_apply(changes);
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER facts_terms_insert AFTER INSERT ON facts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fact_terms_track();
CREATE TRIGGER facts_terms_update AFTER UPDATE ON facts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION fact_terms_track();
CREATE TRIGGER facts_terms_delete AFTER DELETE ON facts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION fact_terms_track();

-- A chat's running summary as memory of "what was discussed when": encrypted and embedded
-- like a fact; replaced as the summary grows (one row per chat).
CREATE TABLE session_summaries (
    user_id          text NOT NULL REFERENCES user_keys (user_id) ON DELETE CASCADE,
    chat_id          text NOT NULL,
    summary_enc      bytea NOT NULL,
    embedding        vector NOT NULL,
    embedding_model  text NOT NULL,
    embedding_dim    integer NOT NULL,
    started_at       timestamptz NOT NULL,  -- the oldest message the summary covers
    covers_until     timestamptz NOT NULL,  -- the newest one
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (user_id, chat_id),
    CONSTRAINT session_summaries_embedding_dim CHECK (vector_dims(embedding) = embedding_dim),
    CONSTRAINT session_summaries_period CHECK (covers_until >= started_at)
);
ALTER TABLE session_summaries ALTER COLUMN embedding SET STORAGE MAIN;
