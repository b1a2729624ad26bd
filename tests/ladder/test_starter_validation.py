"""Each starter kit, as the site offers it for download, passes validation on
the ladder: uploaded over the API, validated by a real Celery worker (from
Redis, on the test database) in the sandbox, and active at the end. The C++
and Rust kits are built from their downloads with their own Makefiles and
zipped again with the binary, as their READMEs tell an author to."""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile

import pytest
from django.test import Client

from ladder.web import docs
from tests.ladder.test_worker_e2e import create_bot, register, settled, upload
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    celery_workers_fixture,
    sandbox_mode,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.any_database, pytest.mark.django_db(transaction=True)]

# Each kit plays its validation in one game; tests/sandbox/test_starters_sandbox.py plays both.
GAMES = {"python-numpy": "allegra", "python-onnx": "allegory", "node": "allegory", "cpp": "allegory", "rust": "allegra"}
BUILT = {"cpp": "g++", "rust": "rustc"}  # the kits built with `make`, and the compiler each needs


def built_zip(downloaded: bytes, name: str, workdir) -> bytes:
    """The downloaded kit NAME, unzipped, built with `make`, zipped again."""
    zipfile.ZipFile(io.BytesIO(downloaded)).extractall(workdir)
    folder = workdir / name
    subprocess.run(["make", "-s"], cwd=folder, check=True, capture_output=True, timeout=120)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(f"{name}/{path.relative_to(folder).as_posix()}")
                info.external_attr = (0o100000 | (path.stat().st_mode & 0o777)) << 16  # keeps the binary executable
                archive.writestr(info, path.read_bytes())
    return out.getvalue()


def test_every_starter_kit_passes_validation_through_a_real_worker(celery_workers, tmp_path):
    for tool in ["make", *BUILT.values()]:
        if shutil.which(tool) is None:
            pytest.fail(f"the C++ and Rust starters need make, g++ and rustc; {tool} is missing (scripts/install-system-packages.sh installs them)")
    worker = celery_workers.start("starters")
    api = Client()
    auth = register(api, "kit-author")
    uploads = {}
    for kit in docs.STARTER_KITS:
        downloaded = api.get(f"/docs/starter-kits/{kit.name}.zip")
        assert downloaded.status_code == 200
        data = built_zip(downloaded.content, kit.name, tmp_path) if kit.name in BUILT else downloaded.content
        bot_id = create_bot(api, auth, f"{kit.name}-starter", GAMES[kit.name])
        uploads[kit.name] = (bot_id, upload(api, auth, bot_id, kit.zip_name, data)["number"])
    for name, (bot_id, number) in uploads.items():
        version = wait_until(lambda b=bot_id, n=number: settled(api, auth, b, n), 180, f"{name}'s validation", celery_workers)
        assert version["status"] == "active", (name, version["validation_log"])
        assert "passed: 2-player validation match" in version["validation_log"]
        assert "passed: 4-player validation match" in version["validation_log"]
    assert "Traceback" not in worker.log()
    if sandbox_mode() == "bwrap":
        assert "sandbox: bwrap" in worker.log()  # validation ran the kits in bubblewrap
