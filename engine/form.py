"""Which form of the rules this process runs: compiled, or the reference.

The pure-Python modules (``engine/core.py``, ``engine/allegory/game.py``,
``engine/allegra/game.py``) are the rules' readable reference. ``make setup``
and the image's build also compile the same files with mypyc
(``scripts/build_engine.py``), which leaves an extension module beside each
one and ``compiled.json`` (the digest of the sources it was built from).
Python prefers an extension module to a ``.py`` of the same name, so the
compiled form is used wherever it was built, and the reference otherwise:

* ``CARDROOM_ENGINE=reference`` forces the reference (benchmarks, the
  differential test); ``CARDROOM_ENGINE=compiled`` requires the compiled form
  (an ImportError saying why where it cannot be had);
* a build from other sources than the ones beside it (the rules were edited
  since) is not used: the reference runs, with a one-line note on stderr;
* a build that does not load here falls back to the reference, with a note.

No build at all (the author's wheel, a machine without a C compiler) is the
reference, silently: that is a supported way to run, not a fault.

Standard library only, and no import of the rest of ``engine``: the build
script loads this file by its path.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

ENV = "CARDROOM_ENGINE"
ENGINE_DIR = Path(__file__).resolve().parent
# the modules compiled, in the order they are built (core first: the games import it)
COMPILED_MODULES = ("engine.core", "engine.allegory.game", "engine.allegra.game", "engine.arrays")
# the extension module mypyc puts the three modules' code in (each module's
# own extension is a small shim that loads it)
SHARED_LIB = "engine.compiled__mypyc"
STAMP = ENGINE_DIR / "compiled.json"


def source_path(module: str) -> Path:
    return ENGINE_DIR.joinpath(*module.split(".")[1:]).with_suffix(".py")


def source_digest() -> str:
    """The digest of the reference sources, as the build records it."""
    h = hashlib.sha256()
    for module in COMPILED_MODULES:
        h.update(module.encode() + b"\0" + source_path(module).read_bytes() + b"\0")
    return h.hexdigest()


def _extension(module: str) -> Path | None:
    """The extension module built for ``module`` that this Python would load."""
    base = ENGINE_DIR.joinpath(*module.split(".")[1:])
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = base.with_name(base.name + suffix)
        if path.is_file():
            return path
    return None


def unusable_reason() -> str | None:
    """Why the compiled form cannot be used here (None: it can be tried).
    The first word is ``not-built`` when there is simply no build."""
    if any(_extension(m) is None for m in (*COMPILED_MODULES, SHARED_LIB)):
        return "not-built: the compiled engine is not built for this Python (make setup builds it)"
    try:
        recorded = json.loads(STAMP.read_text(encoding="utf-8"))["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"stale: the compiled engine has no readable {STAMP.name} (make setup rebuilds it)"
    if recorded != source_digest():
        return "stale: the compiled engine was built from other sources than engine/*.py (make setup rebuilds it)"
    return None


class _ReferenceFinder:
    """Finds the compiled modules' ``.py`` files, never their extensions."""

    def find_spec(self, name, path=None, target=None):
        if name in COMPILED_MODULES:
            return importlib.util.spec_from_file_location(name, source_path(name))
        return None


def _use_reference() -> None:
    for name in (*COMPILED_MODULES, SHARED_LIB):
        sys.modules.pop(name, None)
    if not any(isinstance(f, _ReferenceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ReferenceFinder())


def _note(text: str) -> None:
    print(f"cardroom: {text}; using the pure-Python reference engine", file=sys.stderr)


def load() -> tuple[str, str]:
    """Choose the form before any compiled module is imported (engine's
    ``__init__`` calls this first) and import ``engine.core`` in it.
    Returns the form (``"compiled"`` or ``"reference"``) and why."""
    want = os.environ.get(ENV, "").strip().lower()
    if want not in ("", "auto", "compiled", "reference"):
        raise ImportError(f"{ENV} must be 'reference', 'compiled' or 'auto', not {want!r}")
    if want == "reference":
        _use_reference()
        importlib.import_module("engine.core")
        return "reference", f"{ENV}=reference"
    reason = unusable_reason()
    if reason is None:
        try:
            core = importlib.import_module("engine.core")
            if not core.__file__ or not core.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                raise ImportError(f"engine.core loaded from {core.__file__}")
        except Exception as exc:  # whatever a broken build raises, the reference still runs
            reason = f"failed: the compiled engine does not load here ({type(exc).__name__}: {exc})"
        else:
            return "compiled", "built by make setup (mypyc)"
    if want == "compiled":
        raise ImportError(f"{ENV}=compiled, but {reason.split(': ', 1)[1]}")
    _use_reference()
    importlib.import_module("engine.core")
    kind, why = reason.split(": ", 1)
    if kind != "not-built":
        _note(why)
    return "reference", why


def state_fields(state: object) -> tuple[str, ...]:
    """The names of a state's fields, in either form (mypyc keeps a native
    class's attributes in ``__mypyc_attrs__``, not ``__slots__``), sorted."""
    cls = type(state)
    return tuple(sorted(getattr(cls, "__mypyc_attrs__", None) or getattr(cls, "__slots__")))  # noqa: B009
