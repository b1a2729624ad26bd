"""Compile the rules engine with mypyc, in place, or say in one line why not.

    python scripts/build_engine.py            # make setup, the image's build

mypyc compiles the reference modules themselves (engine/form.py lists them)
into extension modules beside them, and records the digest of the sources
in engine/compiled.json; engine/form.py uses the build only while the
sources still have that digest. The build happens in a scratch folder and
each file is moved into place whole (a running process that has the old
build mapped keeps it).

The modules compiled with the engine (``form.WITH_ENGINE``: the luck
estimator's inner loops) are built in the same run, each group its own
extension beside its source; their digests go in the same record. When
they do not compile, the engine is built alone (and they run as Python).

Every extension is compiled with ``-ffp-contract=off`` (``STRICT_FLOATS``):
the C compiler may not fuse ``a*b + c`` into one rounding (FMA), which
would give other floats than the ``.py`` on a CPU that has it (decision 280).

A build that cannot happen (mypy not installed, no C compiler or no Python
headers, a compile error) is not a failure: this prints one line saying so,
removes any older build, and exits 0; the engine then runs on the reference.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# a*b+c computed as written, never fused into one rounding (FMA, where the
# CPU has it): the compiled form gives the reference's floats bit for bit
STRICT_FLOATS = ["-ffp-contract=off"] if os.name == "posix" else []


def _load_form():
    # by path: importing the engine package would load the build being replaced
    spec = importlib.util.spec_from_file_location("_cardroom_engine_form", ROOT / "engine" / "form.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


form = _load_form()


def built_files(engine_dir: Path) -> list[Path]:
    return [p for p in engine_dir.rglob("*") if p.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))]


def with_engine_files() -> list[Path]:
    """The built extensions of the modules compiled with the engine, where they are."""
    names = [name for lib, group in form.WITH_ENGINE.items() for name in (lib, *group)]
    return [p for p in (form._extension(name) for name in names) if p is not None]


def remove_build(engine_dir: Path) -> None:
    for path in built_files(engine_dir) + with_engine_files():
        path.unlink()
    (engine_dir / form.STAMP.name).unlink(missing_ok=True)


def _sources(modules) -> list[str]:
    return [str(form.source_path(m).relative_to(ROOT)) for m in modules]


def native_tanh() -> None:
    """Let mypyc compile ``math.tanh(x)`` of a float to a direct call of C's
    ``tanh``, as it compiles ``abs(x)`` to ``fabs``: mypyc has no such
    primitive, so each call went through the Python function (a float boxed
    and unboxed each way), half of ``allegra-net@1``'s time at 4 players.
    The same libm function CPython's ``math.tanh`` calls, so the same
    floats (tests/luck/test_luck_nets.py: the compiled network against the
    reference's loops, bit for bit); ``tanh`` has no domain error and cannot
    overflow, so there is nothing to raise (``ERR_NEVER``). Registered with
    mypyc's own primitive table (``function_op``), once, before a build.
    That table is not a public API: where it is not as expected, nothing
    is registered and ``tanh`` stays a call into Python (slower, the same
    floats), rather than the whole build failing."""
    try:
        from mypyc.ir.ops import ERR_NEVER  # noqa: PLC0415
        from mypyc.ir.rtypes import float_rprimitive  # noqa: PLC0415
        from mypyc.primitives.registry import function_op, function_ops  # noqa: PLC0415
    except ImportError:
        return
    if any(op.c_function_name == "tanh" for op in function_ops.get("math.tanh", [])):
        return
    try:
        function_op(
            name="math.tanh",
            arg_types=[float_rprimitive],
            return_type=float_rprimitive,
            c_function_name="tanh",
            error_kind=ERR_NEVER,
        )
    except TypeError:  # another signature
        return


def compile_into(scratch: Path, with_engine: bool) -> list[Path]:
    """Build in ``scratch`` (with ``form.WITH_ENGINE``'s modules or not);
    return the extension files (paths under it)."""
    from mypyc.build import mypycify  # noqa: PLC0415 (only the build needs mypy)
    from setuptools import Distribution

    native_tanh()

    sources = _sources(form.COMPILED_MODULES)
    groups = [(sources, form.SHARED_LIB.removesuffix("__mypyc"))]
    if with_engine:
        groups += [(_sources(group), lib.removesuffix("__mypyc")) for lib, group in form.WITH_ENGINE.items()]
    cwd = os.getcwd()
    os.chdir(ROOT)  # mypyc names modules from paths relative to here
    try:
        if with_engine:
            # groups of their own that read the engine's classes natively; the
            # packages above them (their __init__ imports) are not compiled: not checked
            extensions = mypycify(
                ["--follow-imports=silent", *(src for group, _ in groups for src in group)],
                opt_level="3",
                target_dir=str(scratch / "c"),
                separate=groups,
            )
        else:
            extensions = mypycify(sources, opt_level="3", target_dir=str(scratch / "c"), group_name=groups[0][1])
        for extension in extensions:  # a list of its own each (mypyc gives them one list)
            extension.extra_compile_args = [*extension.extra_compile_args, *STRICT_FLOATS]
        dist = Distribution({"name": "cardroom-engine", "ext_modules": extensions})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib = str(scratch / "lib")
        cmd.build_temp = str(scratch / "tmp")
        cmd.inplace = False
        dist.run_command("build_ext")
    finally:
        os.chdir(cwd)
    return built_files(scratch / "lib")


def compiler_says(log: Path) -> str:
    """The compiler's own words on what failed: the last line of its log naming an error."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return ([line.strip() for line in lines if "error" in line.lower()] or [""])[-1]


def build(scratch: Path, with_engine: bool) -> tuple[list[Path], Path]:
    """Compile in ``scratch``, the compiler's chatter in its ``build.log``
    (shown only if the build fails); the extension files and the log."""
    scratch.mkdir()
    log = scratch / "build.log"
    with open(log, "w") as out:
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        try:
            files = compile_into(scratch, with_engine)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
    wanted = {*form.COMPILED_MODULES, form.SHARED_LIB}
    if with_engine:
        wanted |= {name for lib, group in form.WITH_ENGINE.items() for name in (lib, *group)}
    found = {".".join(p.relative_to(scratch / "lib").parts).split(".cpython")[0].split(".abi")[0] for p in files}
    if not wanted <= found:
        raise RuntimeError(f"the build made {sorted(found)}, not {sorted(wanted)}")
    return files, log


def main() -> int:
    engine_dir = form.ENGINE_DIR
    started = time.monotonic()
    try:
        import mypyc  # noqa: F401
    except ImportError:
        remove_build(engine_dir)
        print("engine: not compiled (mypy is not installed); the pure-Python reference runs")
        return 0
    with tempfile.TemporaryDirectory(prefix="cardroom-engine-build-") as tmp:
        with_engine = sorted(m for group in form.WITH_ENGINE.values() for m in group)
        # the digests of what is compiled, taken before: a source edited during the build is not taken as built
        digests = {"sources": form.source_digest(), "with_engine": {m: form.module_digest(m) for m in with_engine}}
        alone = ""
        try:
            try:
                files, log = build(Path(tmp) / "with", True)
            except (Exception, SystemExit) as exc:  # the engine alone, its companions as Python
                why = compiler_says(Path(tmp) / "with" / "build.log") or f"{type(exc).__name__}: {exc}"
                alone = f"; {', '.join(with_engine)} not compiled ({why}), run as Python"
                with_engine = []
                files, log = build(Path(tmp) / "alone", False)
            scratch = log.parent
        except (Exception, SystemExit) as exc:  # a compiler missing or failing: the reference runs
            log = Path(tmp) / "alone" / "build.log"
            remove_build(engine_dir)
            detail = compiler_says(log)
            why = f"{type(exc).__name__}: {exc}".strip()
            print(f"engine: not compiled ({why}{'; ' + detail if detail else ''}); the pure-Python reference runs")
            return 0
        remove_build(engine_dir)
        for path in files:
            target = form.ROOT / path.relative_to(scratch / "lib")
            partial = target.with_name(target.name + ".partial")
            shutil.copyfile(path, partial)
            os.replace(partial, target)  # a new file, never rewritten in place
        stamp = {
            "sources": digests["sources"],
            "with_engine": {m: digests["with_engine"][m] for m in with_engine},
            "python": sys.version.split()[0],
            "built": int(time.time()),
        }
        partial = form.STAMP.with_name(form.STAMP.name + ".partial")
        partial.write_text(json.dumps(stamp) + "\n", encoding="utf-8")
        os.replace(partial, form.STAMP)
    print(
        f"engine: compiled with mypyc in {time.monotonic() - started:.0f} s "
        f"(CARDROOM_ENGINE=reference runs the reference){alone}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
