"""What the tests and the benchmarks share, so neither imports the other: the test stack's
environment, the composition root filled with in-memory fakes, the fake Vertex endpoint and
the probes that count round trips at the client libraries."""
