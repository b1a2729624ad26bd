# cardroom: every set-up step from a fresh clone. `make test` and `make play`
# create the virtualenv in .venv and install everything they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ENGINE_BUILT := $(VENV)/.engine-built
ENGINE_SOURCES := engine/core.py engine/allegory/game.py engine/allegra/game.py engine/form.py scripts/build_engine.py \
	cardroom/luck/kernel.py cardroom/luck/nets.py

.PHONY: help setup system-packages bot-packages test test-fast test-containers lint demo play bench bench-sandbox clean dist

help:
	@echo "make demo       set up and run the whole platform locally (web, workers, scheduler); Ctrl-C stops it"
	@echo "make setup      create .venv and install cardroom (then .venv/bin/cardroom exists)"
	@echo "make test       set up and run the whole test suite"
	@echo "make test-containers  build the images and run the compose stack for real (private dockerd; root)"
	@echo "make play       set up and play a first match (Allegra, greedy vs three random bots)"
	@echo "make bench      engine speed, compiled beside the reference: decisions, sampled-world playouts and ismcts iterations per second"
	@echo "make bench-compose  matches per minute on the compose stack with 1, 2 and 3 worker containers (root)"
	@echo "make bench-compose-ismcts  the search bot on the compose stack's ladders: 100 matches, no forfeit (root)"
	@echo "make dist       build the author's wheel into dist/ (pip install dist/cardroom-*.whl)"
	@echo "make lint       ruff"

# pip and the compile run quietly for a minute or two on a fresh clone: a
# line before each step says what is happening and about how long it takes.
$(STAMP): pyproject.toml
	@echo "cardroom: [1/3] creating $(VENV) and installing the dependencies with pip (about a minute the first time)..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@echo "cardroom: [1/3] pip: installing cardroom and its dependencies (Django, Celery, mypy ...)"
	$(BIN)/pip install --quiet -e '.[dev]'
	@echo "cardroom: [1/3] dependencies installed"
	touch $(STAMP)

# The rules compiled with mypyc beside their pure-Python reference
# (engine/form.py); where that cannot be done, one line says why and the
# reference runs. Again whenever the rules' sources change.
$(ENGINE_BUILT): $(STAMP) $(ENGINE_SOURCES)
	@echo "cardroom: [2/3] compiling the game rules with mypyc (about a minute the first time; again only when they change)..."
	$(BIN)/python scripts/build_engine.py
	touch $(ENGINE_BUILT)

# The author's wheel (engine, cardroom_sdk, runner, sandbox, command line; no
# Django), which the site offers for download (docs/bot-authors.md). It is
# pure Python (the reference engine): one wheel for every platform. Built by
# pip alone in a venv of its own (pip's isolated build fetches setuptools and
# wheel): 26 MB and seconds, not the 500 MB development venv.
DIST_VENV := .venv-dist
$(DIST_VENV)/bin/pip:
	$(PYTHON) -m venv $(DIST_VENV)

dist: $(DIST_VENV)/bin/pip
	rm -rf dist/cardroom-*.whl build
	$(DIST_VENV)/bin/pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir dist .
	rm -rf build
	@ls dist/cardroom-*.whl

# System packages the sandbox needs (bubblewrap); installs only what is missing.
system-packages:
	@bash scripts/install-system-packages.sh

# ONNX Runtime for python bots (from the package index, with the venv's pip).
bot-packages: $(STAMP) system-packages
	@bash scripts/install-bot-packages.sh $(BIN)/pip

setup: $(STAMP) $(ENGINE_BUILT) system-packages bot-packages

test: setup
	bash scripts/test.sh

# The container deployment for real: a private Docker daemon, the images,
# the compose stack and its scenario (scripts/test-containers.sh; root).
test-containers: setup
	bash scripts/test-containers.sh

test-fast: $(STAMP) $(ENGINE_BUILT)
	$(BIN)/python -m pytest -q -x -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .

# The embedded default: SQLite, a broker on SQLite, all processes on this machine.
# bubblewrap is installed when we can; without it the demo says so and runs
# only its own sample bots, unisolated.
demo: $(STAMP) $(ENGINE_BUILT)
	@echo "cardroom: [3/3] building the authors' wheel and checking the sandbox's packages, then starting the demo..."
	-@$(MAKE) --no-print-directory dist >/dev/null  # the site offers the wheel; the demo runs without it
	-@bash scripts/install-system-packages.sh sandbox
	@mkdir -p var && { [ -s var/secret_key ] || $(BIN)/python -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key; }
	SECRET_KEY="$$(cat var/secret_key)" $(BIN)/python manage.py demo

play: setup
	$(BIN)/cardroom play allegra builtin:greedy builtin:random builtin:random builtin:random --seed 1 --replay first-match.json
	$(BIN)/cardroom verify first-match.json

bench: $(STAMP) $(ENGINE_BUILT)
	$(BIN)/cardroom bench

bench-sandbox: setup
	$(BIN)/python benchmarks/sandbox_bench.py

clean:
	rm -rf $(VENV) $(DIST_VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis first-match.json dist build
	rm -f engine/compiled.json $$(find engine -name '*.so') cardroom/luck/*.so

# --- operations: load and throughput benchmarks (docs/operations.md) ---------
.PHONY: load-test load-test-slow-bots bench-throughput

# The production set-up on this machine (nginx, gunicorn, PostgreSQL, Redis cache):
# 50 readers for 60 s, then 50 half-open slow clients for 30 s, then 10 readers of a
# 1,000-entry event (anonymous, then signed in: 15 s each), and a summary.
# (database cardroom_load, seeded once; LOAD_DATABASE_URL to change it).
load-test: setup
	$(BIN)/python benchmarks/load_test.py

# Abuse scenario "slow bots": another user's three slow bots arrive; the other
# users' match rate must stay at least half of what it was (fair shares).
load-test-slow-bots: setup
	$(BIN)/python benchmarks/slow_bots.py

# Matches per minute with 1 and 2 workers (4-player games, bubblewrap sandbox;
# PostgreSQL database cardroom_throughput and a private Redis).
bench-throughput: setup
	$(BIN)/python benchmarks/throughput.py

# Matches per minute on the compose stack with 1, 2 and 3 worker containers
# (a private Docker daemon, as make test-containers; root).
.PHONY: bench-compose
bench-compose: setup
	bash scripts/containers/run.sh $(BIN)/python benchmarks/compose_scale.py

# builtin:ismcts on the compose stack's ladders beside the other bots, until
# 100 of its matches have finished: its forfeits (must be none) and the
# matches a minute (a private Docker daemon, as make test-containers; root).
.PHONY: bench-compose-ismcts
bench-compose-ismcts: setup
	bash scripts/containers/run.sh $(BIN)/python benchmarks/compose_ismcts.py
