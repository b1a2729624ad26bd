"""Compile the rules engine with mypyc, in place, or say in one line why not.

    python scripts/build_engine.py            # make setup, the image's build

mypyc compiles the reference modules themselves (engine/form.py lists them)
into extension modules beside them, and records the digest of the sources
in engine/compiled.json; engine/form.py uses the build only while the
sources still have that digest. The build happens in a scratch folder and
each file is moved into place whole (a running process that has the old
build mapped keeps it).

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


def _load_form():
    # by path: importing the engine package would load the build being replaced
    spec = importlib.util.spec_from_file_location("_cardroom_engine_form", ROOT / "engine" / "form.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


form = _load_form()


def built_files(engine_dir: Path) -> list[Path]:
    return [p for p in engine_dir.rglob("*") if p.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))]


def remove_build(engine_dir: Path) -> None:
    for path in built_files(engine_dir):
        path.unlink()
    (engine_dir / form.STAMP.name).unlink(missing_ok=True)


def compile_into(scratch: Path) -> list[Path]:
    """Build in ``scratch``; return the extension files (paths under it)."""
    from mypyc.build import mypycify  # noqa: PLC0415 (only the build needs mypy)
    from setuptools import Distribution

    sources = [str(form.source_path(m).relative_to(ROOT)) for m in form.COMPILED_MODULES]
    cwd = os.getcwd()
    os.chdir(ROOT)  # mypyc names modules from paths relative to here
    try:
        extensions = mypycify(
            sources,
            opt_level="3",
            target_dir=str(scratch / "c"),
            group_name=form.SHARED_LIB.removesuffix("__mypyc"),
        )
        dist = Distribution({"name": "cardroom-engine", "ext_modules": extensions})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib = str(scratch / "lib")
        cmd.build_temp = str(scratch / "tmp")
        cmd.inplace = False
        dist.run_command("build_ext")
    finally:
        os.chdir(cwd)
    return built_files(scratch / "lib")


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
        scratch = Path(tmp)
        log = scratch / "build.log"
        try:
            # the compiler's chatter goes to a log, shown only if the build fails
            with open(log, "w") as out:
                saved = os.dup(1), os.dup(2)
                os.dup2(out.fileno(), 1)
                os.dup2(out.fileno(), 2)
                try:
                    files = compile_into(scratch)
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os.dup2(saved[0], 1)
                    os.dup2(saved[1], 2)
            wanted = {*form.COMPILED_MODULES, form.SHARED_LIB}
            found = {".".join(p.relative_to(scratch / "lib").parts).split(".cpython")[0].split(".abi")[0] for p in files}
            if not wanted <= found:
                raise RuntimeError(f"the build made {sorted(found)}, not {sorted(wanted)}")
        except (Exception, SystemExit) as exc:  # a compiler missing or failing: the reference runs
            remove_build(engine_dir)
            lines = log.read_text(errors="replace").splitlines() if log.exists() else []
            detail = [line.strip() for line in lines if "error" in line.lower()][-1:]  # the compiler's own words
            why = f"{type(exc).__name__}: {exc}".strip()
            print(f"engine: not compiled ({why}{'; ' + detail[0] if detail else ''}); the pure-Python reference runs")
            return 0
        remove_build(engine_dir)
        for path in files:
            target = engine_dir.parent / path.relative_to(scratch / "lib")
            partial = target.with_name(target.name + ".partial")
            shutil.copyfile(path, partial)
            os.replace(partial, target)  # a new file, never rewritten in place
        stamp = {"sources": form.source_digest(), "python": sys.version.split()[0], "built": int(time.time())}
        partial = form.STAMP.with_name(form.STAMP.name + ".partial")
        partial.write_text(json.dumps(stamp) + "\n", encoding="utf-8")
        os.replace(partial, form.STAMP)
    print(f"engine: compiled with mypyc in {time.monotonic() - started:.0f} s (CARDROOM_ENGINE=reference runs the reference)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
