"""Load and soak of the served functions with Locust (``python -m bench.load``)."""
