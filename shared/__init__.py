"""The product's Python package: ports, adapters, services and the turn graph."""
