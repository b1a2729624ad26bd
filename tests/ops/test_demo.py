"""``manage.py demo`` (what ``make demo`` runs), for real: the embedded
default (SQLite, and a broker on SQLite), a fresh var folder, gunicorn, a
Celery worker and the scheduler. Matches finish and the leaderboard moves;
Ctrl-C (SIGINT) stops everything, with no process left behind; a second run
resumes the same ladder.

The already-built .venv is used (``make demo`` on a fresh machine builds it
first; that part was checked by hand: docs/operations.md). Bounded: about a
minute per run on 2 cores.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from tests.ops.procs import ROOT, free_port, get_json, kill_marked, marked_pids, wait_for

pytestmark = [pytest.mark.slow]

START_TIMEOUT = 90
MATCH_TIMEOUT = 90
STOP_TIMEOUT = 45


class Demo:
    def __init__(self, tmp_path, marker: str, port: int, run: int):
        self.marker = marker
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.logfile = tmp_path / f"demo-{run}.log"
        self.var = tmp_path / "var"
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "CACHE_URL")}
        name, value = marker.split("=", 1)
        env.update(
            {
                "CARDROOM_VAR_DIR": str(tmp_path / "var"),
                "SECRET_KEY": "demo-test-not-a-secret",
                "PYTHONUNBUFFERED": "1",
                "PORT": str(port),
                name: value,
            }
        )
        self.env = env

    def start(self) -> Demo:
        self._out = open(self.logfile, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "demo"],
            cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=self._out, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group, as a shell's foreground job
        )  # fmt: skip
        wait_for(self._up, START_TIMEOUT, "the demo's web server", log=self.log)
        return self

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"the demo exited with {self.proc.returncode}:\n{self.log()[-6000:]}")
        return get_json(f"{self.base}/api/ladders/", timeout=2)[0] == 200

    def log(self) -> str:
        """What the demo printed, then what its processes logged (in var/logs)."""
        return self.output() + "\n== var/logs/demo.log\n" + self.process_log()

    def output(self) -> str:
        return self.logfile.read_text(errors="replace")

    def process_log(self) -> str:
        path = self.var / "logs" / "demo.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def get(self, path: str):
        status, body = get_json(self.base + path)
        assert status == 200, (path, status, body)
        return body

    def finished(self) -> list[dict]:
        body = self.get("/api/matches/?status=finished")
        return body["results"] if isinstance(body, dict) else body

    def interrupt(self) -> int:
        """Ctrl-C: SIGINT to the foreground process group (the demo's own)."""
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT)
        finally:
            self._out.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        kill_marked(self.marker)


def standings_games(demo: Demo) -> dict[tuple[int, int], int]:
    games = {}
    for ladder in demo.get("/api/ladders/"):
        body = demo.get(f"/api/ladders/{ladder['id']}/standings/")
        for row in body["results"] if isinstance(body, dict) else body:
            games[(ladder["id"], row["bot"])] = row["games"]
    return games


def test_demo_plays_stops_cleanly_and_resumes(tmp_path):
    marker = f"CARDROOM_DEMO_TEST={uuid.uuid4().hex}"
    port = free_port()

    first = Demo(tmp_path, marker, port, 1)
    try:
        first.start()
        assert "cardroom is running: http://127.0.0.1:" in first.output()
        # The worker, the scheduler and the web server are all up: more than one process carries the marker.
        assert len(marked_pids(marker)) >= 4, marked_pids(marker)
        def ladder_matches():
            found = [m for m in first.finished() if m["kind"] == "ladder"]
            return len(found) >= 3 and found

        done = wait_for(ladder_matches, MATCH_TIMEOUT, "three finished ladder matches", log=first.log)
        match = first.get(f"/api/matches/{done[0]['id']}/")
        assert match["status"] == "finished" and match["num_events"] > 0
        assert all(p["elo_after"] is not None for p in match["participants"])
        games = standings_games(first)
        assert sum(games.values()) >= sum(len(m["participants"]) for m in done)  # the leaderboard moved
        # The sample uploads went through the real validation in the sandbox (or say why not).
        output = first.output()
        assert "uploaded sample bot" in output
        # Matches were played and logged, and the URL is still the last line
        # on the screen: the processes' logs went to var/logs (issue 25).
        lines = [line for line in output.splitlines() if line.strip()]
        assert lines[-1].startswith(f"cardroom is running: http://127.0.0.1:{port}/"), lines[-5:]
        assert "logs: var/logs/demo.log" in output or f"logs: {first.var / 'logs' / 'demo.log'}" in output, output
        # The standing open series (decision 208): an open event of each game to enter.
        def open_series():
            body = first.get("/api/tournaments/")
            found = [t for t in (body["results"] if isinstance(body, dict) else body) if t["status"] == "open" and t["name"].startswith("Open ")]
            return len(found) >= 2 and found

        series = wait_for(open_series, 30, "the open series' events", log=first.log)
        assert sorted(t["game"] for t in series) == ["allegory", "allegra"]
        process_log = first.process_log()
        assert '"logger": "cardroom.matches", "message": "match finished"' in process_log and '"match_id": ' in process_log
        assert '"message": "match finished"' not in output
        code = first.interrupt()
    finally:
        first.kill()
    log = first.log()
    assert code == 0, log[-4000:]
    assert "stopped. Run it again to resume the same ladder." in log
    assert "did not stop in time" not in log
    time.sleep(0.5)
    assert marked_pids(marker) == [], "processes left behind after Ctrl-C"
    ids_before = {m["id"] for m in done}

    second = Demo(tmp_path, marker, port, 2)
    try:
        second.start()
        assert "uploaded sample bot" not in second.output()  # the same bots, not uploaded twice
        for match_id in ids_before:  # the same database
            assert second.get(f"/api/matches/{match_id}/")["status"] == "finished"
        total_before = sum(games.values())
        wait_for(
            lambda: sum(standings_games(second).values()) > total_before, MATCH_TIMEOUT, "the ladder to move on", log=second.log
        )
        later = standings_games(second)
        assert all(later.get(key, 0) >= n for key, n in games.items())  # ratings carried on, not reset
        code = second.interrupt()
    finally:
        second.kill()
    assert code == 0, second.log()[-4000:]
    time.sleep(0.5)
    assert marked_pids(marker) == [], "processes left behind after the second Ctrl-C"
