"""The fact system's background side: extraction, entity resolution, conflicts, time markers.

``extraction.ExtractionService`` is what ``functions/extraction`` calls; the other modules are
its steps, each pure or behind a port so the attribution suite runs on in-memory fakes.
"""
