"""A bot trained by research/train.py on the ladder (issue 23): trained for a
few seconds in the venv of the wheel's ``research`` extra, its exported
package (manifest ``runtime = "python"``, numpy weights) uploaded over the
API as a zip passes validation in the sandbox with Debian's numpy (a 2- and a
4-player match: it learned at two, the observation's shape is the same at
four) and plays rated ladder matches through a real Celery worker."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.db import connection
from django.test import Client

from ladder.models import Participant, RatingChange
from tests.ladder.test_worker_e2e import LIMITS, create_bot, register, settled, upload
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    celery_workers_fixture,
    only_ladders,
    play_ladder_round,
    sandbox_mode,
    wait_until,
)
from tests.sdk.test_research_envs import research_venv  # noqa: F401 (a fixture)
from tests.sdk.test_train import _train
from tests.web.test_author_install import _open_dir, author_wheel  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.any_database,
    pytest.mark.django_db(transaction=True),
    # the PostgreSQL pass is enough: nothing here depends on the database (the SQLite pass repeats tests/ladder)
    pytest.mark.skipif(connection.vendor != "postgresql", reason="runs on the PostgreSQL pass only"),
]


def _zipped(folder) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.iterdir()):
            zf.write(path, path.name)
    return buf.getvalue()


def test_a_trained_numpy_bot_passes_validation_and_plays_ladder_matches(research_venv, celery_workers, settings):  # noqa: F811
    bot = _open_dir("cardroom-trained-") / "bot"
    _train(research_venv, "allegory", bot, episodes=32)
    ladders = only_ladders("allegory", [2, 4], **LIMITS)
    celery_workers.start("trained")

    api = Client()
    auth = register(api, "learner")
    bot_id = create_bot(api, auth, "learner-bot")
    uploaded = upload(api, auth, bot_id, "learner-bot.zip", _zipped(bot))
    version = wait_until(lambda: settled(api, auth, bot_id, uploaded["number"]), 180, "validation", celery_workers)
    assert version["status"] == "active", version["validation_log"]
    assert "passed: 2-player validation match" in version["validation_log"]
    assert "passed: 4-player validation match" in version["validation_log"]
    if sandbox_mode() == "bwrap":
        assert "sandbox: bwrap" in celery_workers.logs()

    ladders[4].active = False
    ladders[4].save(update_fields=["active"])
    created = play_ladder_round(celery_workers, settings, 180)
    mine = Participant.objects.filter(match_id__in=created, bot_id=bot_id)
    assert mine.exists()
    assert all(p.forfeit_reason == "" for p in mine), [(p.match_id, p.forfeit_reason, p.forfeit_detail) for p in mine]
    assert RatingChange.objects.filter(participant__in=mine).count() == mine.count()  # every one rated
