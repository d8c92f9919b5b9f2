# make install: .venv with the CLI at .venv/bin/toolproof and the embedded local model
# make demo:    install, validate the example suite, run it and print the results
# make test:    install with dev tools, then lint, type-check and run the tests
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SUITE ?= examples/retail
DEMO_TASKS ?= status-latest-order-by-email,tracking-number-by-phone,payment-amount-and-card,product-stock-and-suggestions
# llama.cpp's native build uses every instruction the build machine has (and dies with SIGILL
# where a VM traps some of them); a portable build runs everywhere.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: install dev demo demo-local test lint typecheck clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[local]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,postgres,local]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

dev: $(VENV)/.dev-installed

demo: install
	$(BIN)/toolproof validate $(SUITE)
	$(BIN)/toolproof run $(SUITE) --agent oracle --trials 5 --k 1,5 --store $(VENV)/demo.db --fresh

# The embedded model on a few lookup tasks: a real LLM end to end, offline (slow on 2 cores).
demo-local: install
	$(BIN)/toolproof run $(SUITE) --tasks $(DEMO_TASKS) --trials 1 --k 1 --max-steps 6 \
		--store $(VENV)/demo.db --fresh

lint: dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: dev
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
