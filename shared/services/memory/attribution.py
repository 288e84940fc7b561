"""Who each extracted fact is about: the user, a resolved person, a new one, or nobody yet.

A fact names its subject by ``about`` (the mention as written); the entity mention of that
name carries the role and descriptors the resolver needs. Each mention is resolved once per
task. When one name stands for two mentions that resolve differently ("my boss Thomas" and
"my brother Thomas" in one message), no fact can say which is meant: held as ambiguous.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shared.conversation.text import fold
from shared.models.extraction import EntityMention, ExtractedFact
from shared.services.memory.profiles import Mention
from shared.services.memory.resolution import Resolution, Resolver


@dataclass(frozen=True)
class Attributed:
    fact: ExtractedFact
    resolution: Resolution


def attribute(
    facts: Sequence[ExtractedFact], entities: Sequence[EntityMention], resolver: Resolver
) -> list[Attributed]:
    mentions = _index(entities)
    cache: dict[str, Resolution] = {}
    attributed = []
    for fact in facts:
        key = fold(fact.about)
        if key not in cache:
            cache[key] = _resolve(fact.about, _mentions_for(fact.about, mentions), resolver)
        attributed.append(Attributed(fact, cache[key]))
    return attributed


def _index(entities: Sequence[EntityMention]) -> dict[str, list[Mention]]:
    index: dict[str, list[Mention]] = {}
    for entity in entities:
        mention = Mention.of(entity)
        same_name = index.setdefault(fold(entity.name), [])
        if mention not in same_name:
            same_name.append(mention)
    return index


def _mentions_for(about: str, mentions: dict[str, list[Mention]]) -> list[Mention]:
    """The mentions ``about`` names: by its folded name, else the one name it contains
    ("my boss Thomas" -> "Thomas"), else a bare mention of ``about`` itself."""
    key = fold(about)
    if key in mentions:
        return mentions[key]
    words = f" {key} "
    inside = [name for name in mentions if name and f" {name} " in words]
    if len(inside) == 1:
        return mentions[inside[0]]
    return [Mention(about.strip())]


def _resolve(about: str, mentions: list[Mention], resolver: Resolver) -> Resolution:
    results = [resolver.resolve(mention) for mention in mentions]
    first = results[0]
    if all(_same_subject(first, other) for other in results[1:]):
        return first
    candidates = tuple(
        dict.fromkeys(
            pid
            for result in results
            for pid in (*result.candidate_ids, *([result.person.id] if result.person else []))
            if result.outcome != "new"
        )
    )
    return Resolution("ambiguous", about, None, 0.0, candidates, "namesakes_in_message")


def _same_subject(a: Resolution, b: Resolution) -> bool:
    if a.outcome != b.outcome:
        return False
    if a.outcome in ("person", "new"):
        return a.person is not None and b.person is not None and a.person.id == b.person.id
    return a.outcome in ("user", "skip") or a.candidate_ids == b.candidate_ids
