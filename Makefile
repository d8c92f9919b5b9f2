# make install: .venv with the CLI at .venv/bin/toolproof
# make demo:    install, validate the example suite, run it and print the results
# make test:    install with dev tools, then lint, type-check and run the tests
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SUITE ?= examples/retail

.PHONY: install dev demo test lint typecheck clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,postgres]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

dev: $(VENV)/.dev-installed

demo: install
	$(BIN)/toolproof validate $(SUITE)
	$(BIN)/toolproof run $(SUITE) --agent oracle --store $(VENV)/demo.db --fresh

lint: dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: dev
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
