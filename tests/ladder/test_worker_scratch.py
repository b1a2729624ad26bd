"""A worker SIGKILLed mid-match leaves its match folder (the bots' unpacked
code) behind; the next worker to start sweeps it away, and leaves the
folders of a worker still playing alone (cardroom.scratch, an flock on each
folder held by its process).

Worker A plays match 1, worker B match 2 (a bot that takes a second a move,
so both are mid-match for a while). A is SIGKILLed; worker C starts: A's
folders are gone, B's are still there while B plays on. Then A's match is
reaped and re-run, and recorded exactly once.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from ladder.models import BotVersion, Match, Participant, Rating, RatingChange
from ladder.services import bots as bot_services
from ladder.services import match_kinds
from ladder.services import matches as match_services
from ladder.tasks import reap_expired_leases
from tests.ladder import factories
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    BOTS,
    celery_workers_fixture,
    only_ladders,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.any_database, pytest.mark.django_db(transaction=True)]

LEASE = "3"
SLOW_BOT = (BOTS / "slow_bot.py").read_bytes().replace(b"SLEEP = 0.2", b"SLEEP = 1.0")  # about 20 s a match


def match_folders() -> set[Path]:
    """Every match folder a worker may have made, wherever: the scratch
    folder, and the system's temporary folder (where they went before)."""
    roots = [Path(settings.CARDROOM_SCRATCH_DIR), Path(tempfile.gettempdir())]
    found = set()
    for root in roots:
        found |= set(root.glob("cardroom-m*")) if root.is_dir() else set()
    return found


def files_under(folders: set[Path]) -> set[str]:
    return {p.name for folder in folders for p in folder.rglob("*") if p.is_file()}


def new_folders(before: set[Path]) -> set[Path]:
    """The folders made since ``before`` with this test's bot in them (the
    match's own and the runner's, wherever they are; another's are not)."""
    return {p for p in match_folders() - before if "slower_bot.py" in files_under({p})}


def test_a_killed_workers_folders_are_swept_by_the_next_and_a_live_ones_are_not(celery_workers):
    ladder = only_ladders("allegory", [2], startup_ms=5000, per_move_ms=3000, overage_ms=5000, total_ms=120000)[2]
    owner = factories.user()
    slow_bot = bot_services.create_bot(owner=owner, game="allegory", name="slowerpoke")
    slow = bot_services.upload_version(bot=slow_bot, filename="slower_bot.py", data=SLOW_BOT)
    bot_services.activate_version(slow)  # validation is not what this test is about
    slow = BotVersion.objects.select_related("bot").get(pk=slow.pk)
    greedy = BotVersion.objects.get(bot__game="allegory", bot__name="greedy", status="active")
    killed_match = match_services.create_match(ladder=ladder, versions=[slow, greedy], seed=1)
    live_match = match_services.create_match(ladder=ladder, versions=[slow, greedy], seed=2)

    def running_on(match, worker):
        m = Match.objects.get(pk=match.pk)
        return m.status == Match.Status.RUNNING and m.worker.startswith(worker.node) and m

    def folders_appear(before, worker):
        def made():  # the match's folder, and the runner's in it (or beside it, as they were)
            folders = new_folders(before)
            nested = {q for p in folders for q in [p, *p.rglob("cardroom-match-*")]}
            return any(p.name.startswith("cardroom-match-") for p in nested) and folders

        return wait_until(made, 20, f"the folders of {worker.name}'s match", celery_workers, interval=0.05)

    before = match_folders()
    worker_a = celery_workers.start("killed", CARDROOM_MATCH_LEASE_SECONDS=LEASE)
    match_kinds.send_match(killed_match.pk)
    wait_until(lambda: running_on(killed_match, worker_a), 30, "worker A to start match 1", celery_workers, interval=0.05)
    a_folders = folders_appear(before, worker_a)

    before = match_folders()
    worker_b = celery_workers.start("live", CARDROOM_MATCH_LEASE_SECONDS=LEASE)
    match_kinds.send_match(live_match.pk)
    wait_until(lambda: running_on(live_match, worker_b), 30, "worker B to start match 2", celery_workers, interval=0.05)
    b_folders = folders_appear(before, worker_b)
    assert not a_folders & b_folders

    worker_a.kill()
    time.sleep(0.5)
    assert all(p.exists() for p in a_folders)  # nothing removes them yet (the killed worker did not)

    worker_c = celery_workers.start("next", CARDROOM_MATCH_LEASE_SECONDS=LEASE)
    # C swept when it started: A's folders, with its copies of the bots' code, are gone ...
    assert [str(p) for p in a_folders if p.exists()] == []
    # ... and B's, in use, are untouched (B is still playing).
    assert running_on(live_match, worker_b), "B finished before C started: the live folders test nothing"
    assert all(p.exists() for p in b_folders)
    assert "slower_bot.py" in files_under(b_folders)

    # The killed match is reaped and re-run (by B or C), and recorded once.
    wait_until(lambda: Match.objects.get(pk=killed_match.pk).lease_expires < timezone.now(), 15, "A's lease to lapse")
    reap_expired_leases.delay()

    def finished(match):
        m = Match.objects.get(pk=match.pk)
        assert m.status != Match.Status.FAILED, m.error
        return m.status == Match.Status.FINISHED and m

    rerun = wait_until(lambda: finished(killed_match), 120, "the killed match to be re-run", celery_workers)
    wait_until(lambda: finished(live_match), 120, "B to finish match 2", celery_workers)
    assert rerun.attempts == 2 and not rerun.worker.startswith(worker_a.node)
    assert RatingChange.objects.filter(match=killed_match).count() == 2
    assert Participant.objects.filter(match=killed_match, score__isnull=False).count() == 2
    assert Rating.objects.get(ladder=ladder, bot=slow.bot).games == 2  # one per match, each once
    # Finished matches take their folders with them.
    wait_until(lambda: not any(p.exists() for p in b_folders), 10, "B's folders to go with its match")
    assert worker_c.alive() and worker_b.alive()
