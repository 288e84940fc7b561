"""Developer scripts; a package so tests can import scripts.stacklib."""
