"""The author's install (issue 22, item 1): the wheel that `make dist` builds,
installed into a fresh virtualenv of Debian's Python with no Django, plays,
verifies, runs a tournament and submits to a running platform; as a user who
is not root it falls back to unsandboxed bots with one warning line; and the
site offers that wheel on "Write your first bot", whose install command a
browser test follows to the letter."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from ladder.models import Bot
from tests.web.conftest import ROOT
from tests.worktree import copy_sources

pytestmark = pytest.mark.slow

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's: an unprivileged user can run it
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def _run(argv, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("timeout", 300)
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)


def _open_dir(prefix: str) -> Path:
    """A folder that another uid may read and write (pytest's own tmp is 0700)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o777)
    return path


@pytest.fixture(scope="session")
def author_wheel() -> Path:
    out = _open_dir("cardroom-dist-")
    # built from a copy of the working tree, as tests/test_dist.py's clone: a
    # build in the checkout writes build/ there, where the research checks'
    # run (scripts/test.sh starts it beside the rest of the suite) builds too
    source = out / "source"
    copy_sources(source)
    done = _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", out, source])
    shutil.rmtree(source)
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("cardroom-*-py3-none-any.whl")
    wheel.chmod(0o644)
    yield wheel
    shutil.rmtree(out, ignore_errors=True)


def _fresh_venv(where: Path) -> Path:
    done = _run([SYSTEM_PYTHON, "-m", "venv", where])
    assert done.returncode == 0, done.stderr
    return where / "bin"


@pytest.fixture(scope="session")
def author_venv(author_wheel) -> Path:
    """The wheel in a fresh venv: what `python3 -m pip install cardroom-….whl` gives an author."""
    home = _open_dir("cardroom-author-")
    bin_dir = _fresh_venv(home / "venv")
    done = _run([bin_dir / "pip", "install", "--quiet", "--disable-pip-version-check", author_wheel])
    assert done.returncode == 0, done.stderr
    for path in [home, *home.rglob("*")]:  # readable for the unprivileged user below
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o755 if path.is_dir() else path.stat().st_mode | 0o644)
    yield bin_dir
    shutil.rmtree(home, ignore_errors=True)


def test_the_wheel_holds_the_toolkit_and_needs_no_django(author_wheel, author_venv):
    import zipfile

    tops = {name.split("/", 1)[0] for name in zipfile.ZipFile(author_wheel).namelist()}
    assert {"engine", "cardroom", "cardroom_sdk", "bots"} <= tops
    assert not tops & {"ladder", "config", "tests"}, "the server's code is not an author's"
    listed = _run([author_venv / "pip", "list", "--format=json", "--disable-pip-version-check"])
    installed = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "cardroom" in installed
    assert not installed & {"django", "djangorestframework", "celery", "psycopg"}, installed
    imported = _run([author_venv / "python", "-c", "import engine, cardroom.runner, cardroom.sandbox, bots, cardroom_sdk; import django"])
    assert "No module named 'django'" in imported.stderr
    # the SDK works there: a world sampled from a seat's view shows that view
    sampled = _run([author_venv / "python", "-c", SDK_CHECK])
    assert sampled.returncode == 0 and sampled.stdout.strip() == "same view", sampled.stdout + sampled.stderr


SDK_CHECK = """
import random, cardroom_sdk
rng = random.Random(1)
state = cardroom_sdk.new_game("allegra", 3).new_initial_state()
while state.is_chance_node() or len(state.observation(None)["discard"]) < 5:
    if state.is_chance_node():
        state.apply_chance(state.sample_chance(rng))
    else:
        seat = state.to_act()[0]
        state.apply(seat, state.random_action(seat, rng))
seat = state.to_act()[0]
world = cardroom_sdk.sample_world(state.observation(seat), rng)
print("same view" if world.observation(seat) == state.observation(seat) else "another view")
"""


def test_play_verify_and_tournament_from_the_wheel(author_venv, tmp_path):
    bot = tmp_path / "my_bot.py"
    shutil.copy(ROOT / "bots" / "random_bot.py", bot)
    replay = tmp_path / "m.json"
    played = _run([author_venv / "cardroom", "play", "allegra", "builtin:greedy", bot, "--seed", "5", "--replay", replay], cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "WITHOUT the sandbox" not in played.stderr  # root with bubblewrap: the ladder's sandbox
    checked = _run([author_venv / "cardroom", "verify", replay])
    assert checked.returncode == 0 and ": OK:" in checked.stdout, checked.stdout + checked.stderr
    event = tmp_path / "ev"
    tour = _run(
        [author_venv / "cardroom", "tournament", "allegory", "builtin:greedy", "builtin:random", "--format", "round-robin",
         "--rounds", "2", "--seed", "1", "--out", event, "--jobs", "1"],
        cwd=tmp_path,
    )
    assert tour.returncode == 0, tour.stderr
    standings = json.loads((event / "standings.json").read_text())
    assert {r["name"] for r in standings["standings"]} == {"greedy", "random"}
    assert len(list((event / "replays").glob("*.json"))) >= 2


def test_a_user_who_is_not_root_plays_unsandboxed_after_one_warning(author_venv):
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is missing")
    work = _open_dir("cardroom-nonroot-")
    try:
        bot = work / "my_bot.py"
        shutil.copy(ROOT / "bots" / "random_bot.py", bot)
        bot.chmod(0o644)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "LANG": "C.UTF-8"}
        played = _run(
            [*NOBODY, author_venv / "cardroom", "play", "allegra", bot, bot, "builtin:random", "--seed", "2", "--replay", work / "m.json"],
            cwd=work, env=env,
        )
        assert played.returncode == 0, played.stderr
        warnings = [line for line in played.stderr.splitlines() if line.startswith("cardroom: warning")]
        assert len(warnings) == 1, played.stderr  # once for the match, not once for each of the two bots
        assert "WITHOUT the sandbox here (the bwrap sandbox must run as root)" in warnings[0]
        assert "the ladder runs each bot in bubblewrap" in warnings[0]
        assert json.loads((work / "m.json").read_text())["result"]["forfeits"] == [], played.stdout
        assert _run([author_venv / "cardroom", "verify", work / "m.json"]).returncode == 0
        # Asked for the sandbox, it refuses instead of falling back.
        refused = _run([*NOBODY, author_venv / "cardroom", "play", "allegra", bot, "builtin:random"], cwd=work,
                       env={**env, "CARDROOM_SANDBOX": "bwrap"})
        assert refused.returncode == 2 and "must run as root" in refused.stderr
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.django_db(transaction=True)
def test_submit_from_the_wheel_to_a_running_platform(author_venv, live_server, tmp_path, django_user_model):
    user = django_user_model.objects.create_user("author", password="x-long-password-123")
    token = Token.objects.create(user=user)
    bot = tmp_path / "my_bot.py"
    shutil.copy(ROOT / "bots" / "random_bot.py", bot)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CARDROOM_TOKEN": token.key, "CARDROOM_SERVER": live_server.url}
    sent = _run([author_venv / "cardroom", "submit", bot, "--game", "allegra", "--name", "from-the-wheel"], env=env)
    assert sent.returncode == 0, sent.stdout + sent.stderr
    uploaded = Bot.objects.get(owner=user, game="allegra", name="from-the-wheel")
    assert uploaded.versions.count() == 1


def test_the_first_bot_page_offers_the_wheel_and_its_command_installs_it(web, author_wheel, settings, live_server, tmp_path):
    settings.CARDROOM_DIST_DIR = author_wheel.parent
    web.goto("/docs/first-bot/")
    pip_line = web.inner_text("[data-testid=install-pip]").strip()
    pipx_line = web.inner_text("[data-testid=install-pipx]").strip()
    wheel_url = f"{live_server.url}/download/{author_wheel.name}"
    assert pipx_line == f"pipx install {wheel_url}"
    assert pip_line == f"python3 -m pip install {wheel_url}"
    with web.expect_download() as download:
        web.click("[data-testid=wheel-download]")
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == author_wheel.name and saved.read_bytes() == author_wheel.read_bytes()

    # The page's own command, word for word, in a fresh venv (its python3 first on PATH).
    bin_dir = _fresh_venv(tmp_path / "venv")
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    installed = _run(pip_line.split(), env=env)
    assert installed.returncode == 0, installed.stderr
    played = _run([bin_dir / "cardroom", "play", "allegory", "builtin:greedy", "builtin:random", "--seed", "1"], env=env)
    assert played.returncode == 0 and "allegory, 2 players" in played.stdout, played.stdout + played.stderr


@pytest.mark.django_db
def test_the_site_offers_only_the_wheel_of_the_version_it_runs(client, settings, tmp_path):
    from cardroom import __version__

    settings.CARDROOM_DIST_DIR = tmp_path
    current = f"cardroom-{__version__}-py3-none-any.whl"
    assert client.get(f"/download/{current}").status_code == 404  # not built: the page says how instead
    assert b'data-testid="install-missing"' in client.get("/docs/first-bot/").content
    (tmp_path / current).write_bytes(b"PK wheel")
    (tmp_path / "cardroom-0.0.1-py3-none-any.whl").write_bytes(b"PK old")
    got = client.get(f"/download/{current}")
    assert got.status_code == 200 and b"".join(got.streaming_content) == b"PK wheel"
    assert client.get("/download/cardroom-0.0.1-py3-none-any.whl").status_code == 404
    assert client.get("/download/..%2Fpyproject.toml").status_code == 404
