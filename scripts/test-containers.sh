#!/usr/bin/env bash
# make test-containers: the images built, the compose stack run for real on a
# private Docker daemon, and its scenario (tests/containers/test_stack.py);
# everything torn down afterwards. scripts/containers/run.sh says how.
cd "$(dirname "$0")/.." || exit 1
exec bash scripts/containers/run.sh .venv/bin/python -m pytest -q tests/containers "$@"
