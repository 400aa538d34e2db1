# The project's commands. `make help` lists them. Only Python 3.11+ and make are needed:
# the first target that needs it creates .venv and installs the project into it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_ARGS ?=
# pytest-xdist workers of `make test` (auto: one per core; 0: none, in this process).
TEST_WORKERS ?= auto
BENCH_ARGS ?=
MUSEUM_DATA ?=

.DEFAULT_GOAL := help

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("Python 3.11 or newer is needed (set PYTHON=...)" if sys.version_info < (3, 11) else 0)'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

.PHONY: help install run test test-unit test-functional coverage lint audit fmt openapi typecheck migrate migration bench bench-search bench-data clean

help: ## List the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

install: $(STAMP) ## Create .venv and install the project with its dev tools

run: $(STAMP) ## Serve both services on http://127.0.0.1:8000 (PORT=N, HOST=H to change; SQLite + embedded Redis, demo data)
	$(BIN)/artcat serve all $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT))

# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set: without it every worker rewrites
# every test module's asserts (seconds of each run) and every process a test starts recompiles
# the project.
test: $(STAMP) ## Run every test (DATABASE_URL/REDIS_URL select PostgreSQL and a Redis server)
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n $(TEST_WORKERS) --dist loadscope $(PYTEST_ARGS)

test-unit: $(STAMP) ## Run the unit tests only (no services, seconds)
	$(BIN)/pytest tests/unit $(PYTEST_ARGS)

test-functional: $(STAMP) ## Run the functional tests (real HTTP, database and Redis)
	$(BIN)/pytest tests/functional $(PYTEST_ARGS)

coverage: $(STAMP) ## Run every test under coverage.py (line and branch) and report it
	rm -f .coverage .coverage.*
	$(BIN)/coverage run -m pytest $(PYTEST_ARGS)
	$(BIN)/coverage combine -q
	$(BIN)/coverage report

lint: $(STAMP) ## Check style and types (ruff, mypy)
	$(BIN)/ruff check .
	$(BIN)/python .ci/private_attrs.py
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

audit: $(STAMP) ## Security audit: bandit on the code, pip-audit on the installed dependencies
	$(BIN)/bandit -c pyproject.toml -r artcat common auth_server resource_server --severity-level low --quiet
	$(BIN)/python .ci/pip_audit.py

fmt: $(STAMP) ## Format the code
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

openapi: $(STAMP) ## Write the auth server's part of the OpenAPI document (common/openapi/auth.json)
	$(BIN)/python -c 'from auth_server.app import describe; from common.openapi import part_json; print(part_json(describe()), end="")' > common/openapi/auth.json

migrate: $(STAMP) ## Apply the database migrations
	$(BIN)/artcat db upgrade

migration: $(STAMP) ## Generate a migration from the models: make migration m="what changed"
	$(BIN)/python -c 'from alembic import command; from common.db import alembic_config, upgrade; from common.settings import Settings; s = Settings.from_env(); upgrade(s); command.revision(alembic_config(s), message="$(m)", autogenerate=True)'

bench: $(STAMP) ## Run the HTTP benchmark against a falcon baseline (bench/README.md; needs wrk and the museum data)
	$(BIN)/python -m bench.http_bench $(BENCH_ARGS)

bench-search: $(STAMP) ## Run the search benchmark (bench/README.md; needs the museum data loaded)
	$(BIN)/python -m bench.search_bench

.PHONY: bench-relevance
bench-relevance: $(STAMP) ## nDCG@10 of the judged search queries (bench/README.md; needs the museum data loaded)
	$(BIN)/python -m bench.relevance

bench-data: $(STAMP) ## Load the museums' data for the benchmarks (MUSEUM_DATA=folder with tate/ and cmoa/, else downloaded)
	$(BIN)/artcat db upgrade
	$(BIN)/artcat load tate --no-progress $(if $(MUSEUM_DATA),$(MUSEUM_DATA)/tate,--download)
	$(BIN)/artcat load cmoa --no-progress $(if $(MUSEUM_DATA),$(MUSEUM_DATA)/cmoa,--download)

clean: ## Remove the virtual environment and caches (keeps ./instance)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
