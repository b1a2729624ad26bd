"""benchmarks/NAME.py as a module, for the tests of a benchmark's measures
(benchmarks/ is scripts, not a package). Loaded once a session: a
benchmark keeps module-level choices (its seeds, a chosen value function)
that its tests share."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def benchmark(name: str):
    key = f"{name}_under_test"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
