"""A node and a native bot through the whole ladder, on a real Celery worker
(PostgreSQL, Redis, the real sandbox): uploaded over the API, validated,
matched against each other; the version says its runtime in the API and on
the bot's page, and the native package that lost its executable bit gets it,
with a note at the head of its validation log."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client

from ladder.models import Match
from tests.ladder.test_worker_e2e import LIMITS, create_bot, register, settled, upload
from tests.ladder.worker_fixtures import (  # noqa: F401 (the fixture celery_workers)
    celery_workers_fixture,
    only_ladders,
    play_ladder_round,
    wait_until,
)
from tests.sandbox.native import HERE, compile_c

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.any_database, pytest.mark.django_db(transaction=True)]


def native_zip(program: bytes) -> bytes:
    """What zipfile.writestr gives: no mode, so no executable bit."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("cardroom.toml", 'entry = "bot"\nprotocol = 1\nruntime = "native"\n')
        zf.writestr("bot", program)
    return buf.getvalue()


def test_node_and_native_bots_validate_and_play_a_ladder_match(celery_workers, settings, tmp_path):
    ladders = only_ladders("allegra", [2], **LIMITS)
    celery_workers.start("runtimes")
    api = Client()
    dana = register(api, "dana")
    native_id = create_bot(api, dana, "dana-c", game="allegra")
    node_id = create_bot(api, dana, "dana-js", game="allegra")
    program = compile_c("first_legal.c", tmp_path / "first_legal").read_bytes()
    native = upload(api, dana, native_id, "dana-c.zip", native_zip(program))
    node = upload(api, dana, node_id, "dana.js", (HERE / "runtimes" / "first_legal.js").read_bytes())
    assert (native["runtime"], node["runtime"]) == ("native", "node")
    note = "note: the entry point 'bot' was not executable (the package did not keep its executable bit); the platform set it"
    assert native["validation_log"].startswith(note), native["validation_log"]

    for bot_id, uploaded in ((native_id, native), (node_id, node)):
        version = wait_until(lambda: settled(api, dana, bot_id, uploaded["number"]), 120, "validation", celery_workers)  # noqa: B023
        assert version["status"] == "active", version["validation_log"]
        assert "passed: 2-player validation match" in version["validation_log"]
    assert settled(api, dana, native_id, 1)["validation_log"].startswith(note)

    created = play_ladder_round(celery_workers, settings, 120)
    played = Match.objects.filter(pk__in=created, participants__bot_id__in=[native_id, node_id]).distinct()
    assert played.exists()
    for match in played:
        assert not match.participants.exclude(forfeit_reason="").filter(bot_id__in=[native_id, node_id]).exists()
    page = Client().get(f"/bots/{native_id}/").content.decode()
    assert 'data-testid="version-runtime">native<' in page
    assert ladders
