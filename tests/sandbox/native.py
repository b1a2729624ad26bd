"""Native test bots: C sources of this suite compiled with the machine's gcc
(scripts/install-system-packages.sh installs it) into a temporary folder,
and packed as native bot packages."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCES = [HERE / "runtimes", HERE / "hostile"]


def compile_c(name: str, out: Path, *flags: str) -> Path:
    """Build ``name`` (a .c file of runtimes/ or hostile/) into ``out``."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed (scripts/install-system-packages.sh installs it)")
    source = next(folder / name for folder in SOURCES if (folder / name).exists())
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([gcc, "-O2", "-Wall", "-o", str(out), str(source), *flags], check=True, capture_output=True, timeout=120)
    return out


def native_package(folder: Path, program: Path, name: str | None = None) -> Path:
    """A folder package whose entry is ``program`` (runtime native)."""
    folder.mkdir(parents=True)
    shutil.copy2(program, folder / "bot")
    (folder / "cardroom.toml").write_text(f'entry = "bot"\nprotocol = 1\nruntime = "native"\nname = "{name or program.name}"\n')
    return folder


def node_package(folder: Path, source: Path, name: str | None = None) -> Path:
    """A folder package whose entry is ``source`` (runtime node)."""
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / "main.js")
    (folder / "cardroom.toml").write_text(f'entry = "main.js"\nprotocol = 1\nruntime = "node"\nname = "{name or source.stem}"\n')
    return folder
