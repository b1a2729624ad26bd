"""The person's seat on the casual worker (ladder.tasks.play_casual_match):
``HumanSeat``, a Player of the runner, and ``run``, the casual queue's task.

The rest of casual play (starting a match, the person's answers, the fair
order, the clocks' settings) is ladder.services.casual's; the hub that holds
the waiting seats is ladder.services.casual_hub's. ``HumanSeat``: for each
decision it publishes the protocol line a bot in the seat would be sent
(cardroom.players' own builders) to the match's CasualSeat row, then waits
for the answer the person's page posts through the API
(ladder.services.casual.answer).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from cardroom.players import TIMEOUT, BotFault, Player, StartInfo, act_message, encode_message, end_message
from ladder import caching
from ladder.models import CasualSeat, Match
from ladder.services import casual, matches
from ladder.services.casual_hub import StartSlot, hub
from ladder.services.connections import DB_ERRORS, close_connection
from ladder.services.leases import LeaseLost

# A waiting thread looks at its seat at least this often even unwoken (the
# hub wakes it at once for an answer, an idle page or a lost lease).
IDLE_RECHECK_SECONDS = 5.0


class HumanSeat(Player):
    """The person's seat in the runner: each decision is published to the
    CasualSeat row and answered through the API (see the module's doc)."""

    def __init__(self, match_id: int, username: str, lost: Callable[[], bool], slot: StartSlot | None = None):
        self.name = username
        self._slot = slot
        self.spec = "human"
        self.match_id = match_id
        self.events: list[dict[str, Any]] = []
        self._lost = lost
        self._move_s = float(settings.CARDROOM_CASUAL_MOVE_SECONDS)
        self._total_ms = settings.CARDROOM_CASUAL_TOTAL_SECONDS * 1000.0
        self._idle_s = float(settings.CARDROOM_CASUAL_IDLE_SECONDS)
        self._poll_s = float(settings.CARDROOM_CASUAL_POLL_SECONDS)
        self._used_ms = 0.0

    def record(self, index: int, event: dict[str, Any]) -> None:
        """The runner's event listener: the match so far, for judging answers."""
        self.events.append(event)

    def start(self, info: StartInfo) -> None:
        pass  # the person is sent no 'start': the page knows the match from GET /api/play/{id}/

    def _publish(self, line: str, deadline) -> int:
        with transaction.atomic():
            seat = CasualSeat.objects.select_for_update().get(pk=self.match_id)
            seat.decision += 1
            seat.message, seat.answer, seat.move_deadline, seat.events = line, None, deadline, list(self.events)
            seat.save(update_fields=["decision", "message", "answer", "move_deadline", "events"])
        return seat.decision

    def _forfeit(self, detail: str) -> BotFault:
        CasualSeat.objects.filter(pk=self.match_id).update(
            message="", answer=None, move_deadline=None, forfeit_reason=TIMEOUT, forfeit_detail=detail
        )
        return BotFault(TIMEOUT, detail)

    def act(self, state, seat: int):
        total_left = self._total_ms - self._used_ms
        line = encode_message(act_message(state, seat, total_left)).decode().rstrip("\n")
        move_s = min(self._move_s, max(total_left, 0.0) / 1000)
        started = time.monotonic()
        decision = self._publish(line, timezone.now() + timedelta(seconds=move_s))
        try:
            return self._await(decision, started + move_s, move_s)
        finally:
            self._used_ms += (time.monotonic() - started) * 1000

    def _await(self, decision: int, deadline: float, move_s: float):
        # The thread sleeps, holding no database connection, while the hub
        # reads every waiting seat of this process in one query and wakes
        # it (decision 202): a waiting match costs a sleeping thread.
        waiter = hub.wait(self.match_id, decision)
        if self._slot is not None:
            self._slot.release()  # started: the next match may start
        if not connection.in_atomic_block:  # (a test's transaction is kept)
            close_connection()
        try:
            while True:
                waiter.woken.clear()
                if self._lost():
                    raise LeaseLost(f"match {self.match_id}: the lease was lost while the person thought")
                if waiter.answered:
                    try:
                        row = CasualSeat.objects.filter(pk=self.match_id, decision=decision).values("answer").first()
                    except DB_ERRORS:
                        close_connection()  # the database is briefly away: the lease keeper decides whether we go on
                        time.sleep(self._poll_s)
                        continue
                    if row is not None and row["answer"] is not None:
                        CasualSeat.objects.filter(pk=self.match_id, decision=decision).update(message="", answer=None, move_deadline=None)
                        return row["answer"]
                if waiter.idle_for > self._idle_s:
                    raise self._forfeit(
                        f"the person's page has not asked for the seat for {waiter.idle_for:.0f} s (the idle limit is "
                        f"{self._idle_s:.0f} s): the tab was closed or left idle"
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._forfeit(self._late(move_s))
                waiter.woken.wait(min(left, IDLE_RECHECK_SECONDS))
        finally:
            hub.done(waiter)

    def _late(self, move_s: float) -> str:
        if move_s < self._move_s:  # the total's rest was shorter than a move
            return f"no move within what was left of the person's {self._total_ms / 1000:.0f} s for the whole match"
        return f"no move within the person's {move_s:.0f} s for this move"

    def end(self, observation: dict[str, Any], result: dict[str, Any]) -> None:
        line = encode_message(end_message(observation, result)).decode().rstrip("\n")
        self._publish(line, None)


def human_seat(match: Match, lost: Callable[[], bool], slot: StartSlot | None = None):
    seat = CasualSeat.objects.select_related("user").get(match=match)
    player = HumanSeat(match.pk, seat.user.username, lost, slot)
    return {seat.seat: player}, player.record


def run(match_id: int, worker: str | None = None) -> matches.RunOutcome:
    """The casual queue's task: claim, play (the person's seat through the
    API), record, as any match (ladder.services.matches). Its message is a
    ticket, not an order: it starts the queued casual match that is first in
    the fair order (``match_id``'s own only when that is its turn). Every
    queued match has a message, so each is started by one of them."""
    outcome = matches.RunOutcome.NOT_QUEUED
    slot = hub.start_slot()
    seats = functools.partial(human_seat, slot=slot)
    try:
        for pick in casual.fair_order():
            outcome = matches.run_queued_match(pick, worker, other_seats=seats, lease_keeper=hub.lease)
            if outcome != matches.RunOutcome.NOT_QUEUED:  # another thread took that one: the next in order
                break
        caching.bump(caching.MATCHES)
    finally:
        slot.release()
        # The thread may sleep long before its next match: its connection
        # is not kept for it (hundreds of threads, PostgreSQL's 100).
        close_connection()
    return outcome
