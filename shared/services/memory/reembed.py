"""Migrate every stored fact to the current embedding model, in resumable batches."""

from __future__ import annotations

import logging

from shared.ports import Embedder, EmbeddingMigration

log = logging.getLogger("reembed")


def reembed_all(migration: EmbeddingMigration, embedder: Embedder, batch: int = 64) -> int:
    """Re-embed until no fact of another model is left; safe to stop and run again."""
    total = 0
    while stale := migration.stale(embedder.model_name, batch):
        vectors = embedder.embed([fact.text for fact in stale])
        changed = migration.replace_embeddings(
            list(zip(stale, vectors, strict=True)), embedder.model_name
        )
        if changed == 0:  # nothing moved: stop rather than loop on the same rows
            raise RuntimeError(f"re-embedding made no progress on {len(stale)} facts")
        total += changed
        log.info("re-embedded", extra={"batch": len(stale), "total": total})
    return total
