"""``cardroom login`` and ``cardroom submit`` (docs/bot-authors.md, "Submitting") as real
processes against a running platform: pytest-django's live server and a real
Celery worker validating in the sandbox. The login prompts are answered
through a pseudo-terminal (getpass reads the terminal, not stdin)."""

from __future__ import annotations

import fcntl
import json
import os
import select
import stat
import subprocess
import termios
import time

import pytest
from rest_framework.authtoken.models import Token

from ladder.models import Bot, BotVersion, Ladder
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    CARDROOM,
    ROOT,
    celery_workers_fixture,
    only_ladders,
)

pytestmark = [pytest.mark.django_db(transaction=True)]

LIMITS = {"startup_ms": 8000, "per_move_ms": 1000, "overage_ms": 4000, "total_ms": 30000}
RANDOM_BOT = (ROOT / "bots" / "random_bot.py").read_text()
# Slow to start (well within the start-up limit): each validation match lasts
# long enough for --wait to see it being played.
SLOW_START_BOT = "import time\ntime.sleep(2)\n" + RANDOM_BOT
CRASHING_BOT = "import sys\nsys.stderr.write('I give up on purpose\\n')\nsys.exit(3)\n"


@pytest.fixture
def server(live_server, tmp_path, settings):
    """The live web app, without a worker (uploads wait in the queue)."""
    factories.fast_passwords(settings)
    only_ladders("allegra", [2, 4], **LIMITS)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "CARDROOM_SUBMIT_POLL_SECONDS": "0.3",
    }
    for name in ("CARDROOM_TOKEN", "CARDROOM_SERVER"):
        env.pop(name, None)
    return {"url": live_server.url, "env": env, "dir": tmp_path}


@pytest.fixture
def platform(server, celery_workers):
    celery_workers.start("submit")
    return {**server, "workers": celery_workers}


def _own_terminal() -> None:  # in the child: the pty becomes its controlling terminal
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def login_through_a_terminal(url: str, env: dict, username: str, password: str) -> tuple[int, str]:
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [CARDROOM, "login", "--server", url], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
        start_new_session=True, preexec_fn=_own_terminal,
    )  # fmt: skip
    os.close(slave)
    seen = b""
    answers = [(b"Username: ", username), (b"Password: ", password)]
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if answers and seen.endswith(answers[0][0]):
                os.write(master, answers.pop(0)[1].encode() + b"\n")
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
        return proc.wait(timeout=30), seen.decode(errors="replace")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()


def submit(platform, bot_file: str, name: str, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CARDROOM, "submit", bot_file, "--game", "allegra", "--name", name, *extra],
        cwd=platform["dir"], env=env or platform["env"], capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def write(platform, filename: str, text: str) -> str:
    path = platform["dir"] / filename
    path.write_text(text)
    return str(path)


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.any_database  # the command line's side of the path
def test_login_then_submit_wait_good_and_failing_bots_and_a_replaced_token(platform):
    user = factories.user("author")
    url, env = platform["url"], platform["env"]

    # login: the prompts on the terminal, the password not echoed, the token stored 0600
    status, screen = login_through_a_terminal(url, env, "author", factories.PASSWORD)
    assert status == 0, screen
    assert f"signed in to {url} as author" in screen
    assert factories.PASSWORD not in screen
    stored = platform["dir"] / "xdg" / "cardroom" / "credentials.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert json.loads(stored.read_text())["servers"][url]["token"] == Token.objects.get(user=user).key

    # a good bot: created, uploaded, followed through validation to active (exit 0)
    good = submit(platform, write(platform, "my_bot.py", SLOW_START_BOT), "cli-bot", "--server", url, "--wait")
    assert good.returncode == 0, good.stdout + good.stderr + platform["workers"].logs()
    out = good.stdout
    assert "created the allegra bot cli-bot" in out
    assert "uploaded my_bot.py as version 1 of cli-bot" in out
    assert "queued for validation: place 1 in the queue" in out
    assert "validating: playing match 1 of 2" in out and "validating: playing match 2 of 2" in out
    assert "active: version 1 of cli-bot plays on the allegra ladders" in out
    # and, right away, that its place on each ladder is not settled yet (docs/ladder.md)
    for ladder in Ladder.objects.filter(game="allegra", active=True):
        assert f"  {ladder.name}: its place is not settled yet" in out
    bot = Bot.objects.get(game="allegra", name="cli-bot")
    assert bot.owner == user and bot.current_version.number == 1

    # a failing bot: exit 1, with the validation log (and full links to the match pages)
    failed = submit(platform, write(platform, "crash.py", CRASHING_BOT), "cli-bot", "--wait")  # the server from login
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "failed: version 2 of cli-bot did not pass validation" in failed.stdout
    assert "I give up on purpose" in failed.stdout
    assert f"{url}/matches/" in failed.stdout
    assert BotVersion.objects.get(bot=bot, number=2).status == "failed"
    assert "created" not in failed.stdout  # the same bot, a new version

    # the token replaced on the site: one clear line, exit 2, nothing uploaded
    Token.objects.filter(user=user).delete()
    Token.objects.create(user=user)
    refused = submit(platform, write(platform, "again.py", RANDOM_BOT + "\n# again\n"), "cli-bot", "--wait")
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    assert "refused the token" in lines[0] and "cardroom login" in lines[0]
    assert "Traceback" not in refused.stderr
    assert BotVersion.objects.filter(bot=bot).count() == 2


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.any_database  # the command line's side of the path
def test_submit_errors_are_one_line(platform):
    factories.user("quick")
    url, env = platform["url"], platform["env"]
    token = Token.objects.create(user=factories.user("other")).key
    # a package the server refuses
    notes = write(platform, "notes.py", "")
    empty = submit(platform, notes, "empty-bot", "--server", url, "--token", token)
    assert empty.returncode == 2
    assert empty.stderr.count("\n") == 1 and "the file is empty" in empty.stderr
    assert not Bot.objects.filter(name="empty-bot").exists()
    # somebody else's bot name
    taken = submit(platform, write(platform, "b.py", RANDOM_BOT), "random", "--server", url, "--token", token)
    assert taken.returncode == 2 and "belongs to cardroom" in taken.stderr and taken.stderr.count("\n") == 1
    # no token at all
    bare = submit(platform, write(platform, "c.py", RANDOM_BOT), "x-bot", "--server", url, env={**env, "XDG_CONFIG_HOME": str(platform["dir"] / "none")})
    assert bare.returncode == 2 and "no token for" in bare.stderr and bare.stderr.count("\n") == 1


# -- without a worker: what the server stores when a submission is refused ---------------------


def submit_as(server, user, bot_file: str, name: str, *extra: str, game: str = "allegra") -> subprocess.CompletedProcess:
    env = {**server["env"], "CARDROOM_TOKEN": Token.objects.get_or_create(user=user)[0].key}
    return subprocess.run(
        [CARDROOM, "submit", bot_file, "--game", game, "--name", name, "--server", server["url"], *extra],
        cwd=server["dir"], env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_refused_package_leaves_no_bot_behind(server, settings):
    author = factories.user("refused-author")
    # Refused here, before anything is sent: the server's own checks.
    for filename, content, reason in [
        ("empty.py", "", "the file is empty"),
        ("random.py", RANDOM_BOT, "the name of Python's standard module 'random'"),
    ]:
        result = submit_as(server, author, write(server, filename, content), "never-made")
        assert result.returncode == 2 and reason in result.stderr and "nothing was sent" in result.stderr, result.stderr
    # Refused by the server (its limit is lower than the package checks'): no bot either.
    settings.CARDROOM_MAX_UPLOAD_BYTES = 1000
    result = submit_as(server, author, write(server, "big.py", RANDOM_BOT + "#" * 1000), "never-made")
    assert result.returncode == 2 and "the limit is 1000 bytes (HTTP 413)" in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert not Bot.objects.filter(owner=author).exists()
    assert "created" not in result.stdout


def test_a_name_you_have_for_the_other_game_is_refused_as_a_game_typo(server):
    author = factories.user("typo-author")
    bot = factories.bot(author, game="allegra", name="lowball")
    result = submit_as(server, author, write(server, "lowball.py", RANDOM_BOT), "lowball", game="allegory")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1
    assert "you have no allegory bot named 'lowball', but you have the allegra bot 'lowball'" in result.stderr
    assert f"{server['url']}/bots/{bot.pk}/" in result.stderr and "--game allegra" in result.stderr
    assert list(Bot.objects.filter(owner=author).values_list("game", flat=True)) == ["allegra"]
    # Meant: --new-bot makes the second bot, with its first version.
    result = submit_as(server, author, write(server, "lowball.py", RANDOM_BOT), "lowball", "--new-bot", game="allegory")
    assert result.returncode == 0, result.stderr
    assert "created the allegory bot lowball" in result.stdout
    made = Bot.objects.get(owner=author, game="allegory", name="lowball")
    assert list(made.versions.values_list("number", "status")) == [(1, "pending")]
    # And the right game uploads a version of the existing bot.
    result = submit_as(server, author, write(server, "lowball.py", RANDOM_BOT + "# v2\n"), "lowball")
    assert result.returncode == 0 and "created" not in result.stdout and "version 1 of lowball" in result.stdout, result.stderr
    assert bot.versions.count() == 1
