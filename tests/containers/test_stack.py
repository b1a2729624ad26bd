"""The container deployment, built and run for real (``make test-containers``):
docker-compose.yml with the test override on a private Docker daemon, two
worker containers, every request from the host over HTTP through the proxy.

One scenario, in order (each test builds on the one before):
  the stack comes up healthy on host networking; a user registers, uploads a
  bot over the API and sees it validated, and a node bot and a native one
  (the starters, the C++ one built static here) too; ladder matches are played by both
  worker containers, in sandboxes whose limits are in force (the status page
  says so); a replay downloaded through the proxy verifies with
  ``cardroom verify``, as does one of the node and native bots' ladder
  matches, each played without a forfeit; a worker container killed (``docker kill``) mid-match
  costs nothing: the match is recorded exactly once, by the other worker.

Skipped unless scripts/test-containers.sh started the private daemon
(CARDROOM_TEST_DOCKER_HOST); that script also builds the images and tears
everything down afterwards, whatever happens here.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest
import requests

from tests.containers.stack import ROOT, Stack, docker_host
from tests.ops.procs import wait_for

pytestmark = [
    pytest.mark.containers,
    pytest.mark.skipif(docker_host() is None, reason="needs the private Docker daemon: run `make test-containers`"),
]

THINK_SECONDS = 0.1  # the uploaded bot's time per move: its matches last seconds
WORKERS = 2
ALL_LIMITS = {"memory", "pids", "cpu", "freezer", "tmpfs", "seccomp", "gate"}  # cardroom.sandbox's probe


def slow_bot_source() -> str:
    """The starter random bot, thinking THINK_SECONDS a move."""
    source = (ROOT / "bots" / "random_bot.py").read_text()
    source = source.replace("import json\n", "import json\nimport time\n", 1)
    marker = "    action = rng.choice(legal)\n"
    assert marker in source
    return source.replace(marker, f"    time.sleep({THINK_SECONDS})\n{marker}", 1)


@pytest.fixture(scope="module")
def stack():
    s = Stack()
    # CARDROOM_TEST_REUSE_STACK=1 (while working on these tests): keep a
    # running stack, bring back what is missing, leave it up afterwards.
    reuse = os.environ.get("CARDROOM_TEST_REUSE_STACK") == "1"
    if not reuse:
        s.down()  # a previous run's leftovers, if any
    try:
        s.up(workers=WORKERS, check_ports=not reuse)
        yield s
    except BaseException:
        print(s.logs(tail=60), file=sys.stderr)
        raise
    finally:
        if not reuse:
            s.down()


@pytest.fixture(scope="module")
def user(stack):
    name = f"op-{uuid.uuid4().hex[:8]}"
    password = "a-long-test-password-1"
    r = requests.post(f"{stack.base}/api/auth/register/", json={"username": name, "password": password}, timeout=30)
    assert r.status_code == 201, r.text
    return {"username": name, "password": password, "token": r.json()["token"]}


@pytest.fixture(scope="module")
def api(user):
    session = requests.Session()
    session.headers["Authorization"] = f"Token {user['token']}"
    return session


@pytest.fixture(scope="module")
def staff(stack, user):
    """A session logged in (Django's admin login form, through the proxy) as
    the user, made staff inside the stack."""
    stack.manage(
        "shell", "-c",
        f"from django.contrib.auth.models import User; User.objects.filter(username={user['username']!r}).update(is_staff=True)",
    )  # fmt: skip
    session = requests.Session()
    login = f"{stack.base}/admin/login/"
    page = session.get(login, timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    r = session.post(
        login, data={"username": user["username"], "password": user["password"], "csrfmiddlewaretoken": token, "next": "/admin/"},
        headers={"Referer": login}, timeout=30,
    )  # fmt: skip
    assert r.status_code == 200 and "sessionid" in session.cookies, r.text[:2000]
    return session


def test_the_stack_is_up_on_the_hosts_network(stack):
    # The proxy answers (and serves static files itself), gunicorn behind it.
    r = requests.get(f"{stack.base}/api/games/", timeout=30)
    assert r.status_code == 200 and {g["id"] for g in r.json()} == {"allegory", "allegra"}
    css = requests.get(f"{stack.base}/static/admin/css/base.css", timeout=30)
    assert css.status_code == 200 and "gunicorn" not in css.headers.get("Server", "")
    # No network of the daemon's own: every container on the host's.
    for service in ("db", "redis", "cache", "web", "proxy", "worker", "scheduler", "scheduler-worker"):
        for c in stack.containers(service):
            assert c["HostConfig"]["NetworkMode"] == "host", (service, c["HostConfig"]["NetworkMode"])
    networks = stack.docker("network", "ls", "--format", "{{.Driver}}").stdout.split()
    assert "bridge" not in networks
    assert len(stack.containers("worker")) == WORKERS


def test_the_web_app_runs_unprivileged_and_the_worker_confined(stack):
    web = stack.containers("web")[0]
    assert web["Config"]["User"] not in ("", "0", "root", "0:0")
    top = stack.docker("top", web["Id"], "-o", "pid,user,args").stdout
    assert "gunicorn" in top and not re.search(r"^\s*\d+\s+(root|0)\s+.*gunicorn", top, re.M), top
    for worker in stack.containers("worker"):
        host = worker["HostConfig"]
        assert host["Privileged"] is False
        assert host["Runtime"] == "cardroom-bwrap"
        assert host["CapDrop"] == ["ALL"] or "ALL" in host["CapDrop"]
        assert "SYS_ADMIN" not in (host["CapAdd"] or []) and "CAP_SYS_ADMIN" not in (host["CapAdd"] or [])
        assert any(o.startswith("no-new-privileges") for o in host["SecurityOpt"])
        assert any(o.startswith("seccomp=") and "unconfined" not in o for o in host["SecurityOpt"])
        # The worker's seccomp profile is in force: a refused call gets EPERM.
        probe = stack.docker(
            "exec", worker["Id"], "python3", "-c",
            "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            "r = libc.syscall(250, 0, 0, 0, 0, 0); print(r, ctypes.get_errno())",  # keyctl on x86_64
        ).stdout.split()  # fmt: skip
        assert probe == ["-1", "1"], probe


def test_an_uploaded_bot_is_validated(stack, api, user):
    r = api.post(f"{stack.base}/api/bots/", json={"game": "allegra", "name": f"slow-{user['username']}"}, timeout=30)
    assert r.status_code == 201, r.text
    bot = r.json()
    r = api.post(
        f"{stack.base}/api/bots/{bot['id']}/versions/",
        files={"file": ("slow_bot.py", slow_bot_source().encode())}, timeout=60,
    )  # fmt: skip
    assert r.status_code == 201, r.text
    version = wait_validated(stack, api, bot["id"])
    assert "sandbox" in version["validation_log"].lower() or version["validation_log"], version
    stack.bot_id = bot["id"]


def starter_zip(folder: Path, built: dict[str, Path] | None = None) -> bytes:
    """A starter's folder zipped as its author would upload it, with the
    files ``built`` (name -> path) added executable."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.iterdir()):
            if path.is_file():
                zf.write(path, path.name)
        for name, path in (built or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            zf.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def wait_validated(stack, api, bot_id: int, timeout: float = 240) -> dict:
    def validated():
        versions = api.get(f"{stack.base}/api/bots/{bot_id}/versions/", timeout=30).json()
        versions = versions["results"] if isinstance(versions, dict) else versions
        status = versions[0]["status"]
        assert status != "failed", versions[0]["validation_log"]
        return status == "active" and versions[0]

    return wait_for(validated, timeout, f"bot {bot_id}'s validation")


def test_a_node_and_a_native_bot_are_validated_in_the_worker_container(stack, api, user, tmp_path_factory):
    """The node starter as its folder, the C++ starter built static on the
    host (its Makefile's flags): each uploaded over the API, validated in a
    worker container's sandbox, its runtime in the API."""
    build = tmp_path_factory.mktemp("cpp-starter") / "bot"
    cpp = ROOT / "bots" / "starters" / "cpp"
    subprocess.run(["g++", "-std=c++17", "-O2", "-static", "-o", str(build), str(cpp / "bot.cpp")], check=True, timeout=120)
    packages = {
        "node": starter_zip(ROOT / "bots" / "starters" / "node"),
        "native": starter_zip(cpp, {"bot": build}),
    }
    stack.runtime_bots = {}
    for runtime, package in packages.items():
        r = api.post(f"{stack.base}/api/bots/", json={"game": "allegra", "name": f"{runtime}-{user['username']}"}, timeout=30)
        assert r.status_code == 201, r.text
        bot_id = r.json()["id"]
        r = api.post(f"{stack.base}/api/bots/{bot_id}/versions/", files={"file": (f"{runtime}.zip", package)}, timeout=60)
        assert r.status_code == 201, r.text
        assert r.json()["runtime"] == runtime, r.json()
        stack.runtime_bots[runtime] = bot_id
    for runtime, bot_id in stack.runtime_bots.items():  # validated side by side, one per worker
        version = wait_validated(stack, api, bot_id)
        assert version["runtime"] == runtime
        assert "passed: 2-player validation match" in version["validation_log"], version["validation_log"]


def finished_ladder_matches(stack) -> list[tuple]:
    return stack.sql("SELECT id, worker FROM ladder_match WHERE status = 'finished' AND kind = 'ladder' ORDER BY id")


def test_ladder_matches_are_played_by_both_workers_in_the_sandbox(stack, staff):
    worker_ids = {c["Id"][:12] for c in stack.containers("worker")}

    def both_played():
        played_by = {m.group(1) for _id, w in finished_ladder_matches(stack) if (m := re.match(r"worker-([0-9a-f]{12})@", w))}
        return len(finished_ladder_matches(stack)) >= 10 and worker_ids <= played_by

    wait_for(both_played, 300, "ladder matches finished by both worker containers")
    # The uploaded bot plays on its ladder too.
    wait_for(
        lambda: stack.sql(
            "SELECT count(*) FROM ladder_participant p JOIN ladder_match m ON m.id = p.match_id "
            "WHERE p.bot_id = %s AND m.status = 'finished'",
            (stack.bot_id,),
        )[0][0] >= 1,
        300, "a finished ladder match of the uploaded bot",
    )  # fmt: skip

    # The status page (staff): both workers alive, each in the bwrap sandbox
    # with every limit in force (not "NOT in force: ...", "unusable: ...").
    doc = staff.get(f"{stack.base}/ops/status.json", timeout=30).json()
    workers = doc["workers"]["list"]
    alive = [w for w in workers if w["alive"]]
    assert {w["name"].split("@")[0].removeprefix("worker-") for w in alive} >= worker_ids, workers
    for w in alive:
        mode, _, limits = w["sandbox"].partition("; ")
        assert mode == "bwrap" and "NOT" not in limits, w
        assert limits.startswith("limits in force: ") and set(limits.removeprefix("limits in force: ").split(", ")) >= ALL_LIMITS, w
    page = staff.get(f"{stack.base}/ops/status/", timeout=30)
    assert page.status_code == 200 and "limits in force: " in page.text and "NOT in force" not in page.text


def shown_ladder_matches(stack) -> list[tuple]:
    """Finished ladder matches whose replay is shown: single ones, and the
    rotations of a duplicate set with no rotation still to play (decision
    255: until then the set's cards stay hidden)."""
    return stack.sql(
        "SELECT m.id FROM ladder_match m WHERE m.status = 'finished' AND m.kind = 'ladder' AND NOT EXISTS ("
        "SELECT 1 FROM ladder_match o WHERE o.duplicate_set_id = m.duplicate_set_id "
        "AND o.status IN ('queued', 'running')) ORDER BY m.id"
    )


def test_a_replay_downloaded_through_the_proxy_verifies(stack, tmp_path):
    shown = wait_for(lambda: shown_ladder_matches(stack), 240, "a finished ladder match whose replay is shown")
    match_id = shown[-1][0]
    r = requests.get(f"{stack.base}/api/matches/{match_id}/replay/", timeout=30)
    assert r.status_code == 200, r.text[:500]
    replay = tmp_path / f"match-{match_id}.json"
    replay.write_bytes(r.content)
    assert_verifies(replay)


def assert_verifies(replay: Path) -> None:
    cli = Path(sys.executable).parent / "cardroom"
    result = subprocess.run([str(cli), "verify", str(replay)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_node_and_native_bots_ladder_matches_are_recorded_and_verify(stack, tmp_path):
    """Each has a finished ladder match in the API, played to the end without
    a forfeit, and the replay of one verifies."""

    def a_finished_match(bot_id):
        r = requests.get(f"{stack.base}/api/matches/", params={"bot": bot_id, "status": "finished"}, timeout=30)
        assert r.status_code == 200, r.text[:500]
        # a rotation of a duplicate set shows its replay once the set is over
        ladder = [
            m for m in r.json()["results"] if m["kind"] == "ladder" and (m["duplicate_set"] or {}).get("over", True)
        ]
        return ladder and ladder[0]

    for runtime, bot_id in stack.runtime_bots.items():
        match = wait_for(lambda: a_finished_match(bot_id), 240, f"a finished ladder match of the {runtime} bot")  # noqa: B023
        seat = next(p for p in match["participants"] if p["bot"] == bot_id)
        assert seat["forfeit"] is None and seat["score"] is not None, (runtime, match)
    r = requests.get(f"{stack.base}/api/matches/{match['id']}/replay/", timeout=30)
    assert r.status_code == 200, r.text[:500]
    replay = tmp_path / f"match-{match['id']}.json"
    replay.write_bytes(r.content)
    assert_verifies(replay)


def test_a_worker_killed_mid_match_costs_nothing(stack):
    """docker kill the worker container playing one of the slow bot's
    matches: the match's lease lapses, the reaper re-queues it, the other
    worker plays it, and it is recorded exactly once."""

    def running_slow_match():
        # Its bots started, and most of it still to play: killed late in a
        # match, the victim could record it before the kill landed.
        rows = stack.sql(
            "SELECT m.id, m.worker FROM ladder_match m JOIN ladder_participant p ON p.match_id = m.id "
            "WHERE p.bot_id = %s AND m.status = 'running' "
            "AND m.started BETWEEN now() - interval '1 second' AND now() - interval '0.3 second'",
            (stack.bot_id,),
        )  # fmt: skip
        return rows and rows[0]

    match_id, worker = wait_for(running_slow_match, 300, "a running match of the slow bot", interval=0.1)
    victim = re.match(r"worker-([0-9a-f]{12})@", worker).group(1)
    stack.docker("kill", victim)  # (returns once the container is gone: its lease may have lapsed by then)

    def recorded():
        (status, attempts, kind, by), = stack.sql(
            "SELECT status, attempts, error_kind, worker FROM ladder_match WHERE id = %s", (match_id,)
        )  # fmt: skip
        assert status not in ("failed", "cancelled"), (status, kind)
        return status == "finished" and (attempts, kind, by)

    attempts, kind, by = wait_for(recorded, 240, f"match {match_id} finished after its worker was killed")
    if attempts == 1:
        (seconds,), = stack.sql(
            "SELECT avg(extract(epoch FROM m.finished - m.started)) FROM ladder_match m "
            "JOIN ladder_participant p ON p.match_id = m.id WHERE p.bot_id = %s AND m.status = 'finished'",
            (stack.bot_id,),
        )  # fmt: skip
        pytest.fail(f"match {match_id} was recorded by {by} at its first attempt: the kill of {victim} "
                    f"came after its end (the slow bot's matches take {seconds} s on average)")  # fmt: skip
    assert attempts == 2 and kind == "worker_lost", (attempts, kind, by, victim)  # it was cut off mid-match, once
    assert victim not in by  # the survivor played it
    seats = stack.sql("SELECT num_players FROM ladder_match WHERE id = %s", (match_id,))[0][0]
    participants = stack.sql("SELECT count(*), count(score) FROM ladder_participant WHERE match_id = %s", (match_id,))[0]
    changes = stack.sql("SELECT count(*), count(DISTINCT participant_id) FROM ladder_ratingchange WHERE match_id = %s", (match_id,))[0]
    assert participants == (seats, seats)
    assert changes == (seats, seats)  # one rating change per seat: recorded once
    assert len(stack.containers("worker")) == WORKERS - 1
