"""What the worker benchmarks share (queue_shares.py, casual_load.py): a
fresh database of their own, Django set up on it, a full ladder queue of
built-in Allegory 2-player matches, and workers started and stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def bench_env(database_url: str, broker_url: str, var: str, **extra: str) -> dict[str, str]:
    """The environment of a benchmark and its workers: its own database,
    broker and var folder (``var/<var>``), quiet logs, a local cache."""
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": broker_url,
            "SECRET_KEY": env.get("SECRET_KEY") or "bench-not-a-secret",
            "CARDROOM_VAR_DIR": str(ROOT / "var" / var),
            "CARDROOM_MEDIA_ROOT": str(ROOT / "var" / var / "media"),
            "LOG_LEVEL": "WARNING",
            "CACHE_URL": "locmemcache://",
            **extra,
        }
    )
    return env


def drop_database(database_url: str, create: bool = False) -> None:
    """Drop the PostgreSQL database ``database_url`` names, if it is there
    (and with ``create``, make it anew, empty)."""
    import psycopg

    base, name = database_url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if create:
            conn.execute(f'CREATE DATABASE "{name}"')


def fresh_django(database_url: str, env: dict[str, str]) -> None:
    """Drop and create the database ``database_url`` names, set the
    environment, set Django up on it and migrate (the default ladders and
    built-in bots come with the migration)."""
    drop_database(database_url, create=True)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def queue_allegory_backlog(count: int):
    """Leave only the Allegory 2-player ladder active and queue ``count`` of
    its matches between the built-in bots, each sent to the broker; returns
    the ladder and the built-in versions."""
    from ladder.models import BotVersion, Ladder
    from ladder.services import enqueue, matches

    Ladder.objects.exclude(game="allegory", players_per_match=2).update(active=False)
    ladder = Ladder.objects.get(game="allegory", players_per_match=2)
    builtins = list(
        BotVersion.objects.filter(bot__game="allegory", bot__builtin=True, status="active").select_related("bot").order_by("bot__name")
    )
    for i in range(count):
        m = matches.create_match(ladder=ladder, versions=[builtins[i % 2], builtins[(i + 1) % 2]], seed=i)
        enqueue.play_match(m.pk)
    return ladder, builtins


def start_worker(name: str, logfile: Path, env: dict[str, str], options: list[str]) -> subprocess.Popen:
    """``celery -A config worker`` with ``options``, in a session of its own."""
    logfile.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [str(BIN / "celery"), "-A", "config", "worker", *options, "-n", f"{name}@%h",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING", "--logfile", str(logfile)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip


def stop(proc: subprocess.Popen, grace: float = 30) -> None:
    """A warm shutdown (SIGTERM to its group), SIGKILL after ``grace`` seconds."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)
