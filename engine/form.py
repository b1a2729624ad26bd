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

A few modules outside the engine are compiled in the same build, each in a
group of its own so that they read the engine's classes natively
(``WITH_ENGINE``: the luck estimator's inner loops, decision 270, and the
learned value functions' networks with their weights as literals, decision
280). Such a group runs compiled only where the engine does and its build
is of the present source of every module in it (``load_with_engine``);
otherwise their ``.py`` run. A build that cannot compile them still
compiles the engine alone.

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
# modules compiled with the engine, by the extension module of their group
WITH_ENGINE: dict[str, tuple[str, ...]] = {
    "cardroom.luck.compiled__mypyc": ("cardroom.luck.kernel", "cardroom.luck.nets"),
}
ROOT = ENGINE_DIR.parent


def source_path(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def source_digest() -> str:
    """The digest of the reference sources, as the build records it."""
    h = hashlib.sha256()
    for module in COMPILED_MODULES:
        h.update(module.encode() + b"\0" + source_path(module).read_bytes() + b"\0")
    return h.hexdigest()


def module_digest(module: str) -> str:
    """The digest of one module compiled with the engine, as the build records it."""
    return hashlib.sha256(source_path(module).read_bytes()).hexdigest()


def _extension(module: str) -> Path | None:
    """The extension module built for ``module`` that this Python would load."""
    base = ROOT.joinpath(*module.split("."))
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
    """Finds the ``.py`` files of the modules in ``names``, never their extensions."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        if name in self.names:
            return importlib.util.spec_from_file_location(name, source_path(name))
        return None


def _use_reference(modules: tuple[str, ...], shared: tuple[str, ...]) -> None:
    for name in (*modules, *shared):
        sys.modules.pop(name, None)
    finder = next((f for f in sys.meta_path if isinstance(f, _ReferenceFinder)), None)
    if finder is None:
        finder = _ReferenceFinder()
        sys.meta_path.insert(0, finder)
    finder.names.update(modules)


def _use_engine_reference() -> None:
    # what is compiled with the engine reads its classes natively: the reference too
    others = tuple(m for group in WITH_ENGINE.values() for m in group)
    _use_reference((*COMPILED_MODULES, *others), (SHARED_LIB, *WITH_ENGINE))


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
        _use_engine_reference()
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
    _use_engine_reference()
    importlib.import_module("engine.core")
    kind, why = reason.split(": ", 1)
    if kind != "not-built":
        _note(why)
    return "reference", why


def load_with_engine(module: str, engine_form: str) -> tuple[str, str]:
    """Choose the form of ``module`` (one of ``WITH_ENGINE``'s) and of the
    rest of its group before they are imported, the engine's form
    (``engine.ENGINE_FORM``) being chosen already: compiled where the
    engine runs compiled and the build holds every module of the group as
    its source is now; else their ``.py`` (with a one-line note when a
    build of other sources is there). The group goes whole: its compiled
    modules call each other natively, which a ``.py`` among them would not
    answer. Returns the form and why."""
    if engine_form != "compiled":
        return "reference", "the engine runs its reference"
    ((shared, group),) = ((lib, group) for lib, group in WITH_ENGINE.items() if module in group)
    if any(_extension(m) is None for m in (*group, shared)):
        why = "not built with the engine (make setup builds it)"
    else:
        try:
            built = json.loads(STAMP.read_text(encoding="utf-8"))["with_engine"]
        except (OSError, ValueError, KeyError, TypeError):
            built = {}
        stale = [m for m in group if built.get(m) != module_digest(m)]
        if not stale:
            return "compiled", "built by make setup (mypyc) with the engine"
        names = " and ".join(source_path(m).name for m in stale)
        why = f"built from another {names} than the one beside it (make setup rebuilds it)"
        print(f"cardroom: {module} was {why}; using the pure-Python form of {', '.join(group)}", file=sys.stderr)
    _use_reference(group, (shared,))
    return "reference", why


def state_fields(state: object) -> tuple[str, ...]:
    """The names of a state's fields, in either form (mypyc keeps a native
    class's attributes in ``__mypyc_attrs__``, not ``__slots__``), sorted."""
    cls = type(state)
    return tuple(sorted(getattr(cls, "__mypyc_attrs__", None) or getattr(cls, "__slots__")))  # noqa: B009
