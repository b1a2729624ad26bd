"""Which sandbox limits are in force: the worker's heartbeat carries them and
/ops/status/ shows them (issue 10: limits fail closed, and say so)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from cardroom.sandbox import SandboxUnavailable, get_launcher, probe
from ladder.models import WorkerHeartbeat
from ladder.services import ops
from tests.ops.test_status import staff_client

pytestmark = pytest.mark.django_db


def bwrap_works() -> bool:
    try:
        get_launcher("bwrap")
    except SandboxUnavailable:
        return False
    return True


@override_settings(CARDROOM_SANDBOX="bwrap")
def test_sandbox_mode_names_the_limits_in_force():
    if not bwrap_works():
        pytest.skip("the bwrap sandbox is unavailable here")
    mode = ops.sandbox_mode()
    held = [limit.name for limit in probe().limits if limit.in_force]
    assert mode.startswith("bwrap; limits in force: "), mode
    assert held and all(name in mode for name in held)
    assert ("NOT in force" in mode) == bool(probe().missing_limits())


@override_settings(ROOT_URLCONF="tests.ops.urls")
def test_status_page_shows_the_workers_limits():
    text = "bwrap; limits in force: memory, pids, tmpfs; NOT in force: cpu, freezer (CARDROOM_SANDBOX_WEAK_LIMITS=1)"
    hb = ops.Heartbeat("w1@host pid 1", sandbox=text)
    assert hb.sandbox == text  # not cut short
    now = timezone.now()
    WorkerHeartbeat.objects.create(
        name="w1@host pid 1", hostname="host-a", pid=1, started=now - timedelta(minutes=1), last_seen=now, sandbox=hb.sandbox
    )
    client = staff_client()
    assert text in client.get("/ops/status/").content.decode()
    assert client.get("/ops/status.json").json()["workers"]["list"][0]["sandbox"] == text
