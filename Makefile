# Two commands on a fresh machine:  `make demo` (set up, then run the offline default)
# and `make test` (set up, then run the test suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-ray lint bench eval soak docs docs-build

# torch's CPU build by default, from PyTorch's CPU wheel index (the package index serves a
# CUDA-linked build of several GB on Linux); TORCH_INDEX=https://download.pytorch.org/whl/cu126
# for a CUDA build, TORCH_INDEX=default for the package index's own.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	scripts/install_torch.sh $(BIN)/pip "$(TORCH_INDEX)"
	$(BIN)/pip install --quiet -e ".[all,dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/hugginggpt demo

# Both labelled sets (evals/README.md), one report each.
eval: $(STAMP)
	$(BIN)/hugginggpt eval evals/labelled.jsonl --output hugginggpt-workspace/eval-report.json
	$(BIN)/hugginggpt eval evals/own_words.jsonl --output hugginggpt-workspace/eval-own-words.json

# The PostgreSQL tests use a throwaway server on the loopback address (installed with
# apt when missing, saying so); without one they are skipped, except in CI where they
# fail. A server this target started is stopped (and its data removed) when the tests
# end, whatever their outcome. TEST_ARGS passes arguments to pytest.
TEST_ARGS ?=
test: $(STAMP)
	@eval "$$(scripts/postgres.sh start || true)"; \
	$(BIN)/python -m pytest $(TEST_ARGS); status=$$?; \
	if [ "$${HUGGINGGPT_TEST_POSTGRES_STARTED:-}" = 1 ]; then scripts/postgres.sh stop; fi; \
	exit $$status

# The expert tier's tests on a real local Ray (tests/test_ray_tier.py, marked ray): Ray
# starts on the loopback address in about 30 s on 2 cores; the tests stop what they start.
test-ray: $(STAMP)
	$(BIN)/python -m pytest -m ray -p no:cacheprovider $(TEST_ARGS)

# ruff (style, and only hugginggpt. imports), import-linter (imports only downwards; see
# ARCHITECTURE.md), mypy
lint: $(STAMP)
	$(BIN)/ruff check hugginggpt graph nodes tools tests benchmarks scripts app.py
	$(BIN)/python scripts/installed_tree.py lint-imports --config {config} --no-cache
	$(BIN)/python scripts/installed_tree.py mypy --config-file {config} \
		--cache-dir $(CURDIR)/.mypy_cache -p hugginggpt

bench: $(STAMP)
	$(BIN)/python benchmarks/scheduling.py

soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py

# The documentation site (docs/, mkdocs.yml): served with live reload on
# http://127.0.0.1:8000, or built strict into site/ (a broken link, a missing reference
# or a stale generated page fails the build), as CI does.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
