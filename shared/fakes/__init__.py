"""In-memory fakes of the ports, for unit tests and the offline profiles.

Each fake refuses what its real adapter in ``shared/adapters`` refuses; ``tests/contract`` runs
one test file against both. Fakes may reuse the adapters' shared rules (ids, keysets, fact
rules), never the other way round.
"""
