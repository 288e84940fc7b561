# The two commands a newcomer needs: `make dev` (run the product) and `make test` (the suite).
.DEFAULT_GOAL := help
PY := .venv/bin/python
PROFILE ?= dev

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

install:  ## install everything into the repo (.venv, .tools), idempotent
	@scripts/bootstrap.sh

dev: install  ## run the product locally: stack, four functions, terminal chat
	@scripts/stack up --profile dev
	@$(PY) scripts/serve.py up --profile dev
	@$(PY) scripts/chat.py --profile dev

down:  ## stop the functions and the stack of PROFILE (dev by default)
	@$(PY) scripts/serve.py down --profile $(PROFILE)
	@scripts/stack down --profile $(PROFILE)

lint: install  ## ruff (lint + format check) and mypy --strict
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .
	@.venv/bin/mypy
	@for fn in functions/*/main.py; do .venv/bin/mypy --strict "$$fn" || exit 1; done

test: install lint  ## the whole test suite against the real local stack
	@scripts/stack up --profile test
	@$(PY) -m pytest -p no:cacheprovider $(PYTEST_ARGS)

bench: install  ## benchmarks that print figures (not tests)
	@scripts/stack up --profile test
	@$(PY) -m bench.cold_start
	@$(PY) -m bench.models
	@$(PY) -m bench.extraction
	@$(PY) -m bench.retrieval

bundles: install  ## build each function's deploy bundle into build/
	@$(PY) scripts/build_bundles.py

.PHONY: help install dev down lint test bench bundles
