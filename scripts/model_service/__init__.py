"""The local model service: one process that holds the offline models for the whole stack.

It speaks the part of the Vertex AI REST API the product's ``vertex`` adapters use, so the
functions run their production code path against it (``VERTEX_BASE_URL``, a static
``VERTEX_ACCESS_TOKEN``). ``scripts/stack`` starts it; see ``python -m scripts.model_service -h``.

- ``calls``: the engines' port (what is asked of them, what they answer).
- ``llama``: SmolLM2 on llama.cpp (xllamacpp), JSON-schema output by grammar, stopped at a
  deadline; embeddings come from ``shared.adapters.local_embedder`` (all-MiniLM-L6-v2).
- ``lanes``: first-come-first-served admission, one generation at a time, with deadlines.
- ``vertex_wire``: Vertex request and response bodies <-> the engines' calls and results.
- ``service``: a request's budget (queue and generation deadlines) and the engines' use.
- ``server``: the HTTP front (routes, bearer token, limits, server-sent events).
- ``child``: the service as a child process, for tests and benchmarks.
"""
