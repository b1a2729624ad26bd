"""``python manage.py demo``: the whole platform on one machine, one command.

Migrates the embedded SQLite database, installs the default ladders and
built-in bots, uploads a few sample bots (validated by the real pipeline),
then runs the web server (gunicorn), a Celery worker, the casual matches'
worker (a person against bots: the casual queue only, threads waiting on
people; decision 135), the Celery scheduler (beat) and the scheduler's
worker (the scheduler queue only: matchmaking and the reaper never wait
behind a match; decision 194) on a broker that needs no server, and prints
the URL. Their logs go to
``var/logs/demo.log`` (appended), so that the URL, printed last, stays on
the screen instead of scrolling away under them. Ctrl-C stops all of it
cleanly; running it again resumes the same ladder.

Resuming: nothing of the demo runs between two runs, so at start-up a match
still "running" was interrupted (its lease is expired at once, and the
reaper re-queues it within seconds), and the broker's queue (a SQLite file)
is emptied and refilled from the database: every queued match is sent again,
and pending sample bots are validated again.

Stopping (Ctrl-C or SIGTERM): web and scheduler stop at once; the worker
finishes the matches it is playing (a warm shutdown, up to
STOP_GRACE_SECONDS), then everything left in the process groups is
killed. A second Ctrl-C kills at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

SAMPLES = [
    ("allegory", "miser", "bots/samples/allegory_miser.py", "Sample bot: bids little, claims chip-laden cards."),
    ("allegra", "lowball", "bots/samples/allegra_lowball.py", "Sample bot: keeps low cards, never knocks."),
    ("allegory", "copycat", "bots/allegory_greedy.py", "Sample upload: a copy of the greedy starter kit."),
    ("allegra", "copycat", "bots/allegra_greedy.py", "Sample upload: a copy of the greedy starter kit."),
]


# How long the worker may take to finish its matches on Ctrl-C.
STOP_GRACE_SECONDS = 30
# Lines of the processes' log shown when one of them stops unexpectedly.
TAIL_LINES = 20


def demo_log_path() -> Path:
    """Where the web server, the worker and the scheduler write their logs."""
    return Path(settings.VAR_DIR) / "logs" / "demo.log"


def _shown_path(path: Path) -> str:
    """``path`` relative to the current folder when it lies under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


class Command(BaseCommand):
    help = "Run the whole cardroom platform locally: web, workers and scheduler."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (default 2)")
        parser.add_argument(
            "--casual-matches", type=int, default=256, help="casual matches (a person against bots) played at once (default 256)"
        )
        parser.add_argument("--setup-only", action="store_true", help="migrate and upload samples, start nothing")

    def handle(self, *args, **opts):
        base = Path(settings.BASE_DIR)
        call_command("migrate", verbosity=0)
        call_command("collectstatic", verbosity=0, interactive=False)
        env = dict(os.environ)
        env.update(self._sandbox_env())
        self._resume()
        self._upload_samples(base)
        if opts["setup_only"]:
            return
        self._run(base, env, opts)

    def _sandbox_env(self) -> dict[str, str]:
        from cardroom.sandbox import SandboxUnavailable, get_launcher

        try:
            launcher = get_launcher(settings.CARDROOM_SANDBOX or None)
        except SandboxUnavailable as exc:
            self.stderr.write(self.style.WARNING(
                f"WARNING: the bubblewrap sandbox is unavailable here ({exc}).\n"
                "The demo runs its own sample bots WITHOUT isolation (CARDROOM_SANDBOX=none, "
                "CARDROOM_ALLOW_UNSANDBOXED_UPLOADS=1). Do not upload bots you do not trust."
            ))
            return {"CARDROOM_SANDBOX": "none", "CARDROOM_ALLOW_UNSANDBOXED_UPLOADS": "1"}
        self.stdout.write(f"sandbox: {launcher.name}")
        self._sandboxed = launcher.isolated
        return {}

    def _upload_samples(self, base: Path) -> None:
        from ladder.models import Bot
        from ladder.services.bots import create_bot, upload_version

        user, created = get_user_model().objects.get_or_create(username="demo")
        if created:
            user.set_unusable_password()
            user.save()
        for game, name, path, description in SAMPLES:
            bot = Bot.objects.filter(game=game, name=name).first() or create_bot(
                owner=user, game=game, name=name, description=description
            )
            if not bot.versions.exists():
                data = (base / path).read_bytes()
                upload_version(bot=bot, filename=Path(path).name, data=data)
                self.stdout.write(f"uploaded sample bot {name} ({game}); the worker validates it")

    def _resume(self) -> None:
        """Pick up where the last run stopped (see the module's docstring)."""
        from django.utils import timezone

        from ladder.models import Match
        from ladder.services.reaper import resend_stale_queued
        from ladder.services.validation import revalidate_stale

        interrupted = Match.objects.filter(status=Match.Status.RUNNING).update(lease_expires=timezone.now())
        purged = self._purge_embedded_broker()
        resent = resend_stale_queued(older_than_seconds=0) if purged is not None else []
        revalidated = revalidate_stale(older_than=timedelta(0))
        if interrupted or resent or revalidated:
            self.stdout.write(
                f"resuming: {interrupted} interrupted match(es) go back to the queue, "
                f"{len(resent)} queued match(es) sent again, {len(revalidated)} validation(s) restarted"
            )

    def _purge_embedded_broker(self) -> int | None:
        """Empty the embedded broker (SQLAlchemy transport on SQLite): the
        database says what is queued. None for any other broker (Redis keeps
        its own queue: the reaper re-sends what it lost)."""
        url = settings.CELERY_BROKER_URL
        if not url.startswith(("sqla+sqlite", "sqlalchemy+sqlite")):
            return None
        import sqlite3

        path = url.split(":///", 1)[1] if ":///" in url else ""
        if not path or not Path(path).exists():
            return 0
        conn = sqlite3.connect(path, timeout=30)
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "kombu_message" not in tables:
                return 0
            with conn:
                return conn.execute("DELETE FROM kombu_message").rowcount
        finally:
            conn.close()

    def _run(self, base: Path, env: dict[str, str], opts) -> None:
        bin_dir = Path(sys.executable).parent
        commands = {
            "web": [str(bin_dir / "gunicorn"), "config.wsgi:application", "--bind", f"{opts['host']}:{opts['port']}",
                    "--workers", "2", "--access-logfile", "-", "--graceful-timeout", "10",
                    "--logger-class", "ladder.hosting.gunicorn.JsonLogger"],
            "worker": [str(bin_dir / "celery"), "-A", "config", "worker", "--loglevel", "INFO",
                       "--concurrency", str(opts["workers"]), "--prefetch-multiplier", "1", "-n", "demo@%h"],
            # Casual matches wait on a person: their own queue, which the worker
            # above never takes, and threads, not processes (decision 135).
            "casual": [str(bin_dir / "celery"), "-A", "config", "worker", "--loglevel", "INFO", "-Q", settings.CARDROOM_CASUAL_QUEUE,
                       "--pool", "threads", "--concurrency", str(opts["casual_matches"]), "--prefetch-multiplier", "1",
                       "-n", "casual@%h"],
            "scheduler": [str(bin_dir / "celery"), "-A", "config", "beat", "--loglevel", "INFO",
                          "--schedule", str(Path(settings.VAR_DIR) / "celerybeat-schedule")],
            # The scheduler's tasks on a queue and a worker of their own: never
            # behind a match, however long (decision 194).
            "scheduler-worker": [str(bin_dir / "celery"), "-A", "config", "worker", "--loglevel", "INFO",
                                 "-Q", settings.CARDROOM_QUEUES["scheduler"], "--pool", "threads", "--concurrency", "1",
                                 "--prefetch-multiplier", "1", "-n", "scheduler@%h"],
        }
        procs: dict[str, subprocess.Popen] = {}
        stopping = False
        self._force = False

        def stop(*_):
            nonlocal stopping
            if stopping:  # a second Ctrl-C: no more waiting
                self._force = True
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        log_path = demo_log_path()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            log.write(f"\n== manage.py demo started {time.strftime('%Y-%m-%d %H:%M:%S')}: web, worker, casual worker, scheduler, scheduler worker\n".encode())
            log.flush()
            for name, argv in commands.items():
                procs[name] = subprocess.Popen(
                    argv, cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
        shown = _shown_path(log_path)
        self.stdout.write(
            f"\nThe web server's, the workers' and the scheduler's logs: {shown} (follow them with: tail -f {shown})\n"
            "Matches start within seconds. Press Ctrl-C to stop everything.\n"
        )
        # Last, so that it stays on the screen: nothing else writes here until Ctrl-C.
        self.stdout.write(self.style.SUCCESS(
            f"cardroom is running: http://{opts['host']}:{opts['port']}/   (API: /api/, admin: /admin/, "
            "status: /ops/status.json)"
        ))
        self.stdout.flush()
        try:
            while not stopping:
                for name, proc in procs.items():
                    if proc.poll() is not None:
                        self.stderr.write(
                            f"{name} stopped unexpectedly (status {proc.returncode}); stopping the rest. "
                            f"The end of {shown}:\n{self._log_tail(log_path)}"
                        )
                        stopping = True
                time.sleep(0.5)
        finally:
            self._stop_all(procs)

    @staticmethod
    def _log_tail(path: Path) -> str:
        try:
            with open(path, "rb") as log:
                log.seek(max(0, log.seek(0, os.SEEK_END) - 64 * 1024))
                lines = log.read().decode("utf-8", "replace").splitlines()
        except OSError as exc:
            return f"(cannot read it: {exc})"
        return "\n".join(f"  {line}" for line in lines[-TAIL_LINES:])

    def _stop_all(self, procs: dict[str, subprocess.Popen]) -> None:
        """SIGTERM to each leader (gunicorn's master stops its workers;
        Celery's worker finishes its matches: a warm shutdown), SIGKILL to
        whatever is left of each process group after the grace period, or
        at once on a second Ctrl-C."""
        self.stdout.write("stopping: web, scheduler, worker (it finishes the matches it is playing)…")
        self.stdout.flush()
        for proc in procs.values():
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        killed = False
        for name, proc in procs.items():
            while proc.poll() is None and time.monotonic() < deadline and not self._force:
                time.sleep(0.2)
            if proc.poll() is None:
                killed = True
                self.stderr.write(f"{name} did not stop in time: killed (its match goes back to the queue next time)")
        for proc in procs.values():
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the group: pool processes, bots, anything left
            except (ProcessLookupError, PermissionError):
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if killed and getattr(self, "_sandboxed", False):
            self._sweep_sandbox()
        self.stdout.write("stopped. Run it again to resume the same ladder.")

    def _sweep_sandbox(self) -> None:
        """A worker killed mid-match leaves that match's bots frozen in their
        cgroups, outside its process group (bwrap's pid namespace): the
        sandbox's own sweep of what dead workers left (the one a worker runs
        when it starts) kills and removes them now, not at the next start."""
        from cardroom.sandbox import probe

        report = probe(refresh=True)
        for note in report.notes:
            if note.startswith("removed "):
                self.stdout.write(f"sandbox: {note}")
