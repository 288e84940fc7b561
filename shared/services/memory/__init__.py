"""The fact system: entity resolution, attribution, conflicts, time markers, held facts.

``shared.app.extraction`` runs its write path; the turn graph calls the resolver and
``pending`` (held facts settled by an answer). Each module is pure or behind the ports of
``ports``, so the attribution suite runs on in-memory fakes.
"""
