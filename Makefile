# Two commands on a fresh machine:  `make demo` (set up, then run the offline default)
# and `make test` (set up, then run the test suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint bench eval soak

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/hugginggpt demo

eval: $(STAMP)
	$(BIN)/hugginggpt eval evals/labelled.jsonl --output hugginggpt-workspace/eval-report.json

# The PostgreSQL tests use a throwaway server on the loopback address (installed with
# apt when missing); without one they are skipped, except in CI where they fail.
test: $(STAMP)
	eval "$$(scripts/postgres.sh start || true)"; $(BIN)/python -m pytest

# ruff (style, and only hugginggpt. imports), import-linter (imports only downwards; see
# ARCHITECTURE.md), mypy
lint: $(STAMP)
	$(BIN)/ruff check hugginggpt graph nodes tools tests benchmarks scripts
	$(BIN)/python scripts/installed_tree.py lint-imports --config {config} --no-cache
	$(BIN)/python scripts/installed_tree.py mypy --config-file {config} \
		--cache-dir $(CURDIR)/.mypy_cache -p hugginggpt

bench: $(STAMP)
	$(BIN)/python benchmarks/scheduling.py

soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py
