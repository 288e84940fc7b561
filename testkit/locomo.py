"""LoCoMo's evidence ids as the retrieval bench stores them: an observation of the real file
cites one dia id ("D1:3") or a list of them (["D1:3", "D1:5"]); stored as one comma-joined
key on the fact's source, and split again to compare with a question's evidence."""

from __future__ import annotations


def evidence_ids(evidence: str | list[str]) -> str:
    return evidence if isinstance(evidence, str) else ",".join(evidence)


def split_ids(key: str) -> list[str]:
    return [part for part in key.split(",") if part]
