"""The deterministic understanding tier: what a message is, before any model is asked.

``UnderstandingTier(embedder).understand(message, Context(...))`` returns an
``Understanding``: the route (by nearest labelled examples, or by the grammar of an explicit
command), the people named and their roles (spaCy), time expressions resolved in the
user's zone (dateparser), facts of common statement shapes, the plan of an explicit
command, and an extractive answer from retrieved facts. Each part says whether the tier
decided it or it falls through to the model; the tier is right or abstains.

A leaf package: it imports only ``shared.models``, ``shared.ports``, ``shared.conversation``
(the relation words it shares with the fact system, the text fold), ``shared.errors``,
``shared.config`` and third-party libraries. The embedder comes in through the ``Embedder``
port (all-MiniLM-L6-v2: the router's vectors are made with it); spaCy's model, dateparser
and the vectors load on first use, once per process.
"""

from shared.understanding.answers import KnownFact
from shared.understanding.result import Understanding
from shared.understanding.tier import Context, UnderstandingTier

__all__ = ["Context", "KnownFact", "Understanding", "UnderstandingTier"]
