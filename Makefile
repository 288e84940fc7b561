# The two commands a newcomer needs: `make dev` (run the product) and `make test` (the suite).
.DEFAULT_GOAL := help
PY := .venv/bin/python
PROFILE ?= dev
ENV ?= dev
TF := terraform -chdir=terraform

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

install:  ## install everything into the repo (.venv, .tools), idempotent
	@scripts/bootstrap.sh

dev: install  ## run the product locally: stack, the functions, web client, terminal chat
	@cd web && npm run -s build >/dev/null
	@scripts/stack up --profile dev
	@$(PY) scripts/serve.py up --profile dev
	@echo "web client: http://127.0.0.1:8525/ (sign in with any user name)"
	@$(PY) scripts/chat.py --profile dev

down:  ## stop the functions and the stack of PROFILE (dev by default)
	@$(PY) scripts/serve.py down --profile $(PROFILE)
	@scripts/stack down --profile $(PROFILE)

lint: install  ## ruff, mypy --strict, the import layers, terraform fmt and the checkov scan
	@.venv/bin/ruff check .
	@.venv/bin/ruff format --check .
	@.venv/bin/lint-imports --no-cache --no-logo >/dev/null || .venv/bin/lint-imports --no-cache --no-logo
	@.venv/bin/mypy
	@for fn in functions/*/main.py; do .venv/bin/mypy --strict "$$fn" || exit 1; done
	@command -v terraform >/dev/null || { echo "lint: terraform is not on PATH;" \
		"install it (https://developer.hashicorp.com/terraform/install)" >&2; exit 1; }
	@# fmt reads no CLI configuration; a missing one would only add a warning.
	@TF_CLI_CONFIG_FILE=/dev/null terraform fmt -check -recursive terraform >/dev/null \
		|| { echo "lint: run terraform fmt -recursive terraform" >&2; exit 1; }
	@.tools/checkov-venv/bin/checkov --config-file terraform/.checkov.yaml

web: install  ## the web client: type check against docs/openapi.yaml, eslint, vitest, build
	@cd web && npm run -s check

docs: install  ## the docs site: mkdocs build --strict (warnings are errors) into .site/
	@# Not --quiet: it hides the warnings from the count that --strict fails on.
	@NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

test: install lint web docs  ## the whole test suite against the real local stack, browser tests included
	@scripts/stack up --profile test
	@$(PY) -m pytest -p no:cacheprovider $(PYTEST_ARGS)

bench: install  ## benchmarks that print figures (not tests)
	@scripts/stack up --profile test
	@$(PY) -m bench.cold_start
	@$(PY) -m bench.models
	@$(PY) -m bench.extraction
	@$(PY) -m bench.retrieval
	@$(PY) -m bench.retrieval --quality
	@$(PY) -m bench.turn
	@$(PY) -m bench.origin
	@$(PY) -m bench.hitl
	@$(PY) -m bench.agents
	@$(PY) -m bench.understanding
	@$(PY) -m bench.web_client
	@$(PY) -m bench.reminders

DATASET ?= eval/data/own.locomo.json
PROVIDER ?= local
eval: install  ## memory quality end to end: make eval DATASET=path PROVIDER=local|vertex [EVAL_ARGS=...]
	@scripts/stack up --profile $(PROFILE)
	@$(PY) -m eval.run --dataset $(DATASET) --provider $(PROVIDER) --profile $(PROFILE) --serve $(EVAL_ARGS)

graph: install  ## regenerate docs/graph.md from the compiled turn graph
	@$(PY) scripts/graph_diagram.py

bundles: install  ## build each function's deploy bundle into build/
	@$(PY) scripts/build_bundles.py

plan: bundles  ## terraform plan of ENV=dev|staging|prod to terraform/ENV.tfplan (GCP credentials)
	@test -f terraform/envs/$(ENV).tfvars || { echo "plan: no terraform/envs/$(ENV).tfvars" >&2; exit 1; }
	@$(TF) init -input=false -reconfigure -backend-config=envs/$(ENV).gcs.tfbackend
	@$(TF) plan -input=false -var-file=envs/$(ENV).tfvars -out=$(ENV).tfplan $(TF_ARGS)
	@echo "review it, then: terraform -chdir=terraform apply $(ENV).tfplan"

.PHONY: help install dev down lint web docs test bench eval bundles graph plan
