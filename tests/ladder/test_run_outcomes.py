"""What running a match returns is a ``RunOutcome``, and the match tasks
log it (issue 39): a message for a match that is not queued is dropped,
and says so."""

from __future__ import annotations

import logging

import pytest

from ladder import tasks
from ladder.services import matches
from tests.ladder import factories

pytestmark = pytest.mark.django_db


def test_a_match_task_for_a_match_no_longer_queued_logs_that_it_dropped_it(caplog):
    match = factories.queued_match(factories.ladder(), [factories.active_bot(), factories.active_bot()])
    matches.cancel(match)
    match_id = match.pk
    with caplog.at_level(logging.INFO, logger="cardroom.tasks"):
        result = tasks.play_match.apply(args=(match_id,)).get()
    assert result == matches.RunOutcome.NOT_QUEUED == "not queued"
    [line] = [r for r in caplog.records if r.name == "cardroom.tasks"]
    assert line.getMessage() == "match task done: not queued"
    assert (line.match_id, line.outcome) == (match_id, "not_queued")


def test_every_outcome_has_a_distinct_value():
    values = [o.value for o in matches.RunOutcome]
    assert len(set(values)) == len(values) == 4
