"""What differs by the kind of a match, in one place: a policy per
``Match.Kind`` (ladder, event, validation, casual).

A policy says which time control the match plays under, the allowance on
its wall-clock ceiling, how many attempts it gets, whether it may start
now, which task message plays it (and so its queue), what its result does
(ratings, an event's standings, the person's seat) and what a platform
failure does. ladder.services.matches plays and records every match the same
way and asks the match's policy at each of those points; no other module
branches on ``Match.Kind`` (tests/ladder/test_match_kinds.py reads the
source to keep it so).

Where the messages go: ``send_match`` stamps ``enqueued`` and sends the
message of the match's kind through ladder.services.enqueue (the routes in
``config.settings`` put each task on its queue; an event's matches go to
the events' queue). A validation match is played by its version's
validation task, which plays all of them and draws the verdict.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from cardroom.players import TimeControl
from cardroom.runner import MatchRecord
from ladder.models import CasualSeat, Ladder, Match, Participant, Tournament, TournamentMatch
from ladder.services import enqueue, tournaments
from ladder.services.ratings import apply_match_ratings

MessageKey = tuple[str, int | None]


def strictest_time_control(match: Match) -> TimeControl:
    """The strictest limits of the active ladders of the match's game and
    player count (the defaults when there is none)."""
    ladders = list(Ladder.objects.filter(game=match.game, players_per_match=match.num_players, active=True))
    if not ladders:
        return TimeControl()
    return TimeControl(
        min(lad.startup_ms for lad in ladders),
        min(lad.per_move_ms for lad in ladders),
        min(lad.overage_ms for lad in ladders),
        min(lad.total_ms for lad in ladders),
    )


class MatchPolicy:
    """The default: what a ladder match does, unless a kind says otherwise."""

    kind: Match.Kind
    # A person plays a seat (CasualSeat): the replay names them, and the
    # match is nobody's share of the ladder's workers.
    has_person_seat = False
    # Matchmaking makes and counts these (fair share: a bot's matches in flight).
    made_by_matchmaking = False
    # The reaper's sweep re-sends a stale message (an event sends its own).
    resent_by_sweep = True
    # Its luck is kept once the result is recorded (ladder.services.luck): a rated match's.
    keeps_luck = False

    def time_control(self, match: Match) -> TimeControl:
        return strictest_time_control(match)

    def ceiling_allowance_ms(self) -> int:
        """The platform's own share of the match's wall-clock ceiling."""
        return settings.CARDROOM_MATCH_CEILING_ALLOWANCE_SECONDS * 1000

    def max_attempts(self) -> int:
        return settings.CARDROOM_MATCH_MAX_ATTEMPTS

    def may_start(self, match: Match) -> bool:
        """Checked as a queued match is claimed: False drops the message."""
        return True

    def chance(self, match: Match) -> Any:
        """The chance stream the runner deals from (None: the seed's own)."""
        return None

    def message_key(self, match_id: int, version_id: int | None) -> MessageKey:
        """The task and first argument of the message that plays the match."""
        return enqueue.PLAY_MATCH, match_id

    def send(self, match_id: int, version_id: int | None, countdown: int) -> None:
        enqueue.play_match(match_id, countdown=countdown)

    def name_seats(self, match: Match, replay: dict) -> bool:
        """Rename seats in the replay before it is stored; True if any changed."""
        return False

    def on_result(self, match: Match, participants: list[Participant], record: MatchRecord, forfeits: dict) -> None:
        """In the transaction that records the result."""

    def on_failure(self, match: Match, countdown: int) -> None:
        """In the transaction that re-queued (QUEUED) or gave up on (FAILED)
        the match after a platform failure."""
        if match.status == Match.Status.QUEUED:
            transaction.on_commit(lambda: send_match(match.pk, countdown))


class LadderPolicy(MatchPolicy):
    kind = Match.Kind.LADDER
    made_by_matchmaking = True
    keeps_luck = True

    def time_control(self, match: Match) -> TimeControl:
        """The ladder's limits."""
        ladder = match.ladder
        if ladder is None:
            return super().time_control(match)
        return TimeControl(ladder.startup_ms, ladder.per_move_ms, ladder.overage_ms, ladder.total_ms)

    def chance(self, match: Match) -> Any:
        from cardroom.tournament.seeds import KeyedChance

        # a rotation of a duplicate set: the deal's streams, as an event's duplicate deal
        return KeyedChance(match.seed) if match.duplicate_set_id is not None else None

    def on_result(self, match, participants, record, forfeits) -> None:
        apply_match_ratings(match, participants)


class TournamentPolicy(MatchPolicy):
    """An event's match: never rated; its results make the event's standings."""

    kind = Match.Kind.TOURNAMENT
    resent_by_sweep = False  # tournaments.feed_all re-sends

    def time_control(self, match: Match) -> TimeControl:
        """The event's limits."""
        t = Tournament.objects.get(schedule__match=match)
        return TimeControl(t.startup_ms, t.per_move_ms, t.overage_ms, t.total_ms)

    def may_start(self, match: Match) -> bool:
        # paused or cancelled: the message is dropped; resume sends it again
        return tournaments.may_play(match.pk)

    def chance(self, match: Match) -> Any:
        from cardroom.tournament.seeds import KeyedChance

        # a duplicate deal: one chance stream per kind (docs/tournaments.md)
        if TournamentMatch.objects.filter(match=match, keyed_chance=True).exists():
            return KeyedChance(match.seed)
        return None

    def send(self, match_id: int, version_id: int | None, countdown: int) -> None:
        enqueue.play_tournament_match(match_id, countdown=countdown)

    def on_result(self, match, participants, record, forfeits) -> None:
        tournaments.record_luck(match, record.replay)  # (before on_match_done locks the event's row)
        tournaments.on_match_done(match)

    def on_failure(self, match: Match, countdown: int) -> None:
        if match.status == Match.Status.FAILED:
            tournaments.on_match_done(match)
        super().on_failure(match, countdown)


class ValidationPolicy(MatchPolicy):
    """A check of a new version: the strictest limits of its game's ladders
    (a version that passes then keeps to every ladder's limits)."""

    kind = Match.Kind.VALIDATION

    def message_key(self, match_id: int, version_id: int | None) -> MessageKey:
        return enqueue.VALIDATE_VERSION, version_id  # one validation task plays all of its matches

    def send(self, match_id: int, version_id: int | None, countdown: int) -> None:
        enqueue.validate_version(version_id, resume=True, countdown=countdown)

    def on_failure(self, match: Match, countdown: int) -> None:
        # The validation task draws the verdict: it must hear of a failed
        # match too (and starts validation over later).
        transaction.on_commit(lambda: send_match(match.pk, countdown))


class CasualPolicy(MatchPolicy):
    """A person against bots (ladder.services.casual): never rated."""

    kind = Match.Kind.CASUAL
    has_person_seat = True

    def ceiling_allowance_ms(self) -> int:
        # and the person's own clock (decision 132)
        return super().ceiling_allowance_ms() + settings.CARDROOM_CASUAL_TOTAL_SECONDS * 1000

    def max_attempts(self) -> int:
        # Played again from the start, it would deal the person the hands
        # they have seen: a casual match gets one attempt (decision 134).
        return 1

    def message_key(self, match_id: int, version_id: int | None) -> MessageKey:
        return enqueue.PLAY_CASUAL_MATCH, match_id

    def send(self, match_id: int, version_id: int | None, countdown: int) -> None:
        enqueue.play_casual_match(match_id, countdown=countdown)

    def name_seats(self, match: Match, replay: dict) -> bool:
        """Name the person's seat as the account is called now, read under
        the account's row lock: one deleted while the match played is named
        by its tombstone. (ladder.services.accounts.delete_account takes that
        lock first, then renames the replays of the matches finished before
        it: either way no replay keeps the old name, decision 191.)"""
        seat = CasualSeat.objects.only("user_id", "seat").get(match=match)
        name = get_user_model().objects.select_for_update(no_key=True).values_list("username", flat=True).get(pk=seat.user_id)
        player = replay["players"][seat.seat]
        if player["name"] == name:
            return False
        player["name"] = name
        return True

    def on_result(self, match, participants, record, forfeits) -> None:
        """The person's result is the seat's."""
        seat = CasualSeat.objects.select_for_update().get(match=match)
        seat.score, seat.rank = record.result.scores[seat.seat], record.result.ranks[seat.seat]
        forfeit = forfeits.get(seat.seat)
        if forfeit is not None:
            seat.forfeit_reason, seat.forfeit_detail = forfeit.reason, forfeit.detail[:2000]
        seat.answer, seat.move_deadline = None, None
        seat.save(update_fields=["score", "rank", "forfeit_reason", "forfeit_detail", "answer", "move_deadline"])

    def on_failure(self, match: Match, countdown: int) -> None:
        CasualSeat.objects.filter(match=match).update(message="", answer=None, move_deadline=None)
        super().on_failure(match, countdown)


POLICIES: dict[str, MatchPolicy] = {p.kind: p for p in (LadderPolicy(), TournamentPolicy(), ValidationPolicy(), CasualPolicy())}


def policy_for(kind: str) -> MatchPolicy:
    return POLICIES[kind]


def kinds(**attributes: Any) -> list[str]:
    """The kinds whose policy has these attribute values (for a query)."""
    return [k for k, p in POLICIES.items() if all(getattr(p, name) == value for name, value in attributes.items())]


def send_match(match_id: int, countdown: int = 0) -> None:
    """Send the task message that plays the match (or the validation it
    belongs to), to the queue of its kind; stamp ``enqueued``
    (ladder.services.reaper re-sends a stale one)."""
    row = Match.objects.filter(pk=match_id).values("kind", "validation_of_id").first()
    if row is None:
        return
    enqueue.stamp_enqueued(match_id, countdown)
    policy_for(row["kind"]).send(match_id, row["validation_of_id"], countdown)


def without_message(matches: list[tuple[int, str, int | None]]) -> list[tuple[int, str, int | None]]:
    """Of ``matches`` ((id, kind, validation_of_id) each), those whose
    message no longer waits in the broker (enqueue.without_message)."""
    return enqueue.without_message(matches, key=lambda m: policy_for(m[1]).message_key(m[0], m[2]))
