# make install: .venv with the CLI at .venv/bin/toolproof and the embedded local model
# make demo:    install, validate the example suite, run the embedded model on it, print results
# make test:    install with dev tools, then lint, type-check and run the tests
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SUITE ?= examples/retail
# The demo's share of the suite: on two CPU cores a model turn of the embedded LLM takes seconds.
DEMO_TASKS ?= status-latest-order-by-email,tracking-number-by-phone,payment-amount-and-card
DEMO_TRIALS ?= 2
# llama.cpp's native build uses every instruction the build machine has (and dies with SIGILL
# where a VM traps some of them); a portable build runs everywhere.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: install dev demo demo-oracle test lint typecheck clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[local,examples]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,postgres,local,examples,otel,ray]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

dev: $(VENV)/.dev-installed

# The embedded model (no --agent, no --model), offline: 3 lookup tasks x 2 trials, at most 6
# model turns of 128 tokens each; 3-4 minutes on two quiet cores.
demo: install
	$(BIN)/toolproof validate $(SUITE)
	$(BIN)/toolproof run $(SUITE) --tasks $(DEMO_TASKS) --trials $(DEMO_TRIALS) --k 1,2 \
		--max-steps 6 --max-tokens 128 --store $(VENV)/demo.db --fresh

# The whole suite with the oracle, the baseline every task is proved against (seconds).
demo-oracle: install
	$(BIN)/toolproof run $(SUITE) --agent oracle --trials 5 --k 1,5 --store $(VENV)/demo.db --fresh

lint: dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: dev
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
