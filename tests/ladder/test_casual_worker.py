"""The human seat end to end (issue 24, item 1; decisions 130-136): a person
plays a casual match through the API against built-in bots, which run in the
sandbox on a real Celery worker consuming only the casual queue; the
exchange's guarantees (an illegal action changes nothing, a stale or second
answer is refused, another user neither reads the hand nor acts); the idle
forfeit frees every bot process; and a waiting casual match leaves the
ladder's worker free."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from bots import builtin_chooser
from ladder.models import CasualSeat, Match, RatingChange
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    cardroom_verify,
    celery_workers_fixture,
    only_ladders,
    play_ladder_round,
    sandbox_mode,
    task_ids,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CASUAL_QUEUE = "casual"
# The casual worker as make demo and the compose stack run it (fewer threads).
CASUAL_WORKER = {"pool": "threads", "queues": CASUAL_QUEUE}
FAST_EXCHANGE = {"CARDROOM_CASUAL_POLL_SECONDS": "0.02"}
LIMITS = {"startup_ms": 5000, "per_move_ms": 500, "overage_ms": 2000, "total_ms": 20000}


def signed_in(username: str) -> tuple[Client, dict]:
    user = factories.user(username)
    return Client(), {"HTTP_AUTHORIZATION": f"Token {factories.token(user)}"}


def start(api: Client, auth: dict, **body) -> int:
    r = api.post("/api/play/", body, content_type="application/json", **auth)
    assert r.status_code == 201, r.content
    return r.json()["id"]


def seat_now(api: Client, auth: dict, match_id: int) -> dict:
    r = api.get(f"/api/play/{match_id}/", **auth)
    assert r.status_code == 200, r.content
    return r.json()


def post_action(api: Client, auth: dict, match_id: int, body: dict):
    return api.post(f"/api/play/{match_id}/action/", body, content_type="application/json", **auth)


def awaited(api: Client, auth: dict, match_id: int, workers, after: int = 0, timeout: float = 60) -> dict:
    """The seat once it awaits an answer to a decision later than ``after``
    (or the match is over)."""

    def ready():
        seat = seat_now(api, auth, match_id)
        if seat["status"] in ("finished", "failed", "cancelled"):
            return seat
        message = seat["message"]
        return seat if message and message["type"] == "act" and seat["decision"] > after else None

    return wait_until(ready, timeout, f"casual match {match_id} to await decision {after + 1}", workers, interval=0.02)


def test_a_person_plays_a_casual_match_to_its_end_through_the_api(celery_workers, tmp_path):
    worker = celery_workers.start("casual", **CASUAL_WORKER, **FAST_EXCHANGE)
    api, alice = signed_in("alice")
    match_id = start(api, alice, game="allegory", num_players=3, opponents=["builtin:greedy", "builtin:random"], seat=1)

    first = awaited(api, alice, match_id, celery_workers)
    assert first["status"] == "running" and first["seat"] == 1 and first["decision"] == 1
    message = first["message"]
    # Exactly what a bot in seat 1 is sent: an 'act' with the seat's observation.
    assert list(message) == ["type", "observation", "legal", "time_left_ms"]
    assert message["observation"]["seat"] == 1 and message["observation"]["to_act"] == [1]
    assert [p["name"] for p in first["players"]] == ["greedy", "alice", "random"]

    # Another user neither reads the hand nor acts for alice.
    other, bob = signed_in("bob")
    assert other.get(f"/api/play/{match_id}/", **bob).status_code == 403
    legal = message["legal"]
    refused = post_action(other, bob, match_id, {"action": legal[0]})
    assert refused.status_code == 403 and "moral" not in refused.content.decode()

    # An illegal action: 400 with the engine's reason, and nothing changes.
    r = post_action(api, alice, match_id, {"action": {"type": "bid", "amount": 10_000}, "decision": 1})
    assert r.status_code == 400 and r.json()["field"] == "action", r.content
    assert "illegal action" in r.json()["error"]
    r = post_action(api, alice, match_id, {"action": {"type": "dance"}})
    assert r.status_code == 400
    again = seat_now(api, alice, match_id)
    assert again["decision"] == 1 and again["message"] == message

    # Two tabs answer decision 1 at once: exactly one wins; the other, and
    # a later answer naming the spent decision, get a 409.
    results = []
    barrier = threading.Barrier(2)

    def tab():
        barrier.wait()
        results.append(post_action(Client(), alice, match_id, {"action": legal[0], "decision": 1}).status_code)

    tabs = [threading.Thread(target=tab) for _ in range(2)]
    for t in tabs:
        t.start()
    for t in tabs:
        t.join()
    assert sorted(results) == [200, 409], results
    second = awaited(api, alice, match_id, celery_workers, after=1)
    if second["status"] == "running":
        stale = post_action(api, alice, match_id, {"action": second["message"]["legal"][0], "decision": 1})
        assert stale.status_code == 409 and stale.json()["field"] == "decision", stale.content

    # Play on to the end, as the random bot would choose.
    choose, rng = builtin_chooser("random", "allegory"), random.Random(3)
    seat, decisions = second, 1
    while seat["status"] == "running":
        act = seat["message"]
        action = choose(act["observation"], act["legal"], rng)
        r = post_action(api, alice, match_id, {"action": action, "decision": seat["decision"]})
        assert r.status_code == 200, r.content
        decisions += 1
        seat = awaited(api, alice, match_id, celery_workers, after=seat["decision"])
    seat = wait_until(lambda: (s := seat_now(api, alice, match_id))["message"] and s, 30, "the end message", celery_workers)
    assert seat["status"] == "finished" and seat["forfeit"] is None, seat
    end = seat["message"]
    assert end["type"] == "end" and set(end["result"]) == {"scores", "ranks", "forfeits"}
    assert seat["rank"] == end["result"]["ranks"][1] and seat["decision"] == decisions + 1

    # The replay downloads and verifies; the match is never rated nor listed.
    r = api.get(f"/api/matches/{match_id}/replay/")
    assert r.status_code == 200
    path = Path(tmp_path) / "casual.json"
    path.write_bytes(r.content)
    verified = cardroom_verify(path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    replay = r.json()
    assert replay["players"][1] == {"seat": 1, "name": "alice", "bot": "human"}
    assert sum(1 for e in replay["events"] if e["by"] == 1) == decisions
    match = Match.objects.get(pk=match_id)
    assert match.kind == "casual" and match.rating_sequence is None and match.worker.startswith(worker.node)
    assert not RatingChange.objects.filter(match=match).exists()
    assert all(p.elo_before is None and p.worker_ms is None for p in match.participants.all())
    listed = api.get("/api/matches/", **alice).json()["results"]
    assert match_id not in [m["id"] for m in listed]
    assert api.get(f"/api/matches/{match_id}/", **alice).json()["kind"] == "casual"


# -- the idle forfeit, and the ladder's worker ---------------------------------------------


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (from /proc's parent links)."""
    parent = {}
    for name in Path("/proc").iterdir():
        if name.name.isdigit():
            try:
                status = (name / "status").read_text()
            except OSError:
                continue
            ppid = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:"))
            parent[int(name.name)] = int(ppid)
    found, frontier = [], {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier}
        found.extend(frontier)
    return found


def cgroups_of(pid: int) -> set[Path]:
    """The cgroup folders of ``pid`` that are its own (not the root's)."""
    found = set()
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in (controllers or "unified").split(","):
            folder = Path("/sys/fs/cgroup") / ("" if controller == "unified" else controller.removeprefix("name=")) / path.lstrip("/")
            if path not in ("/", "") and folder.exists():
                found.add(folder)
    return found


# The PostgreSQL pass is enough: nothing here depends on the database (the
# SQLite pass repeats tests/ladder; the exchange's locking, which does, is
# the test above).
@pytest.mark.skipif(connection.vendor != "postgresql", reason="runs on the PostgreSQL pass only")
def test_a_waiting_match_leaves_the_ladder_worker_free_and_the_idle_forfeit_frees_its_bots(celery_workers, settings):
    only_ladders("allegra", [2], **LIMITS)
    settings.CARDROOM_CASUAL_IDLE_SECONDS = 6  # the web's, which the page is told, and the worker's below
    ladder_worker = celery_workers.start("ladder")  # no -Q: every queue a ladder worker takes
    casual = celery_workers.start("casual", **CASUAL_WORKER, **FAST_EXCHANGE, CARDROOM_CASUAL_IDLE_SECONDS="6")
    api, alice = signed_in("alice")
    match_id = start(api, alice, game="allegra", num_players=3, opponents=["builtin:random", "builtin:greedy"], seat=0)
    seat = awaited(api, alice, match_id, celery_workers)
    assert seat["idle_forfeit_seconds"] == 6

    # While it waits on alice, its two bots are frozen in the sandbox under
    # the casual worker, and the ladder's worker plays a round of matches.
    bots = [pid for pid in descendants(casual.pid) if pid != casual.pid]
    assert bots, "no bot process under the casual worker"
    groups = set().union(*(cgroups_of(pid) for pid in bots)) - cgroups_of(casual.pid)
    if sandbox_mode() == "bwrap":
        assert any("cardroom-sandbox" in str(g) for g in groups), groups  # each bot in cgroups of its own
    played = play_ladder_round(celery_workers, settings, timeout=90)
    assert Match.objects.filter(pk__in=played, worker__startswith=ladder_worker.node).count() == len(played)
    assert not task_ids(ladder_worker.log(), "ladder.tasks.play_casual_match")
    assert Match.objects.get(pk=match_id).status == "running"

    # alice's tab is gone: no poll for 6 s forfeits her seat, the default
    # policy plays it out, and every bot process and cgroup is gone.
    done = wait_until(
        lambda: Match.objects.filter(pk=match_id, status="finished").first(), 60, "the idle forfeit", celery_workers
    )
    seat_row = CasualSeat.objects.get(match=done)
    assert seat_row.forfeit_reason == "timeout" and "idle" in seat_row.forfeit_detail
    assert seat_now(api, alice, match_id)["forfeit"]["reason"] == "timeout"
    deadline = time.monotonic() + 10
    while [pid for pid in bots if Path(f"/proc/{pid}").exists()] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in bots if Path(f"/proc/{pid}").exists()] == [], "bot processes are left"
    assert descendants(casual.pid) == []
    assert [g for g in groups if g.exists()] == [], "bot cgroups are left"
