# cardroom: every set-up step from a fresh clone. `make test` and `make play`
# create the virtualenv in .venv and install everything they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help setup system-packages test test-fast lint play bench bench-sandbox verify-examples clean

help:
	@echo "make setup      create .venv and install cardroom (then .venv/bin/cardroom exists)"
	@echo "make test       set up and run the whole test suite"
	@echo "make play       set up and play a first match (Allegra, greedy vs three random bots)"
	@echo "make bench      engine speed: decisions and games per second"
	@echo "make lint       ruff"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# System packages the sandbox needs (bubblewrap); installs only what is missing.
system-packages:
	@bash scripts/install-system-packages.sh

setup: $(STAMP) system-packages

test: setup
	$(BIN)/python -m pytest -q

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -x -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check engine bots cardroom tests

play: setup
	$(BIN)/cardroom play allegra builtin:greedy builtin:random builtin:random builtin:random --seed 1 --replay first-match.json
	$(BIN)/cardroom verify first-match.json

bench: $(STAMP)
	$(BIN)/cardroom bench

bench-sandbox: setup
	$(BIN)/python benchmarks/sandbox_bench.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis first-match.json
