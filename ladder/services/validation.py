"""Validation on upload: a new version plays real matches in the sandbox
against the built-in bots, at every player count its game's ladders use,
before it may play on a ladder.

The ``validate_version`` task plays a version's validation matches (one per
player count, the new version in the last seat) through the same
claim / lease / record path as ladder matches, and draws the verdict once all
of them are finished:

* every match finished without a forfeit of the new version: it becomes the
  bot's active version (unless a newer version is already active);
* the new version forfeited in some match (crash, timeout, illegal action…):
  the version is failed, and its validation log (shown to its owner through
  the API) says which match, why, at which event, what to do, and ends with
  the tail of the bot's stderr;
* a platform problem (the sandbox is unusable, a worker died, the database
  went away) is never the bot's fault: the match is retried (see
  ``ladder.services.matches``); a match that failed for good is cancelled and
  validation starts over later; the version stays pending meanwhile.

Every path that re-queues a validation match (a platform failure, the lease
reaper, the stale-message re-sender) sends a new ``validate_version`` message,
and whoever finishes the last match draws the verdict, so the verdict is
drawn exactly once, under the version's row lock.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from bots import SEARCHING
from cardroom.players import ForfeitReason
from ladder import selectors
from ladder.models import BotVersion, Ladder, Match, Participant
from ladder.services import enqueue
from ladder.services.bots import activate_version, game_label

log = logging.getLogger("cardroom.validation")

LOG_TAIL = 4000
# A version left pending (a lost message, a platform problem) is sent again
# this long after its last validation attempt.
STALE_PENDING = timedelta(minutes=5)

# What a bot's author can do about each forfeit reason.
HINTS: dict[str, str] = {
    ForfeitReason.CRASH: "your program stopped with an error: its stderr below shows why (a Python traceback, say).",
    ForfeitReason.EXIT: "your program stopped before the match ended: keep reading stdin until the \"end\" message.",
    ForfeitReason.TIMEOUT: "answer \"start\" within the start-up limit and every \"act\" within the move limit "
    "(\"time\" in the start message; \"time_left_ms\" in each act message says what is left in all), "
    "and keep reading stdin: the time we take to hand your program a message counts against it.",
    ForfeitReason.INVALID_JSON: "write exactly one JSON object per line on stdout, and flush it; write your logs to stderr, never stdout.",
    ForfeitReason.INVALID_MESSAGE: "answer \"start\" with {\"type\": \"ready\"} and every \"act\" with "
    "{\"type\": \"action\", \"action\": {…}} and nothing else (docs/protocol.md).",
    ForfeitReason.ILLEGAL_ACTION: "answer with one of the actions listed in \"legal\" (for Allegory's distribute, a valid filling of "
    "the template), with exactly the keys the protocol shows.",
    ForfeitReason.OUTPUT_LIMIT: "keep each line on stdout under 1 MiB.",
}


# Where the site explains forfeits (linked from every failed validation).
FORFEIT_DOCS = "/docs/bot-authors/#forfeits"


def _noted(version: BotVersion) -> str:
    """The notes of the upload's checks (the entry's executable bit set),
    at the head of every validation log of the version."""
    return f"{version.upload_notes}\n" if version.upload_notes else ""


class ValidationRetry(Exception):
    """A platform problem interrupted validation; try again later."""


def _opponents(game: str, count: int) -> list[BotVersion]:
    builtins = list(
        BotVersion.objects.filter(bot__game=game, bot__builtin=True, status=BotVersion.Status.ACTIVE)
        .exclude(bot__name__in=SEARCHING)
        .select_related("bot")
        .order_by("bot__name")
    )
    if not builtins:
        raise ValidationRetry(f"no built-in {game} bots are installed (run manage.py migrate)")
    return [builtins[i % len(builtins)] for i in range(count)]


def _create_validation_match(version: BotVersion, n: int) -> Match:
    ladder = Ladder.objects.filter(game=version.bot.game, players_per_match=n, active=True).order_by("pk").first()
    seats = _opponents(version.bot.game, n - 1)
    # The new version sits last: it sees the whole table act before its first move.
    seats.append(version)
    match = Match.objects.create(
        kind=Match.Kind.VALIDATION,
        validation_of=version,
        game=version.bot.game,
        options=ladder.options if ladder else {},
        num_players=n,
        seed=secrets.randbelow(2**62),
        enqueued=timezone.now(),
    )
    Participant.objects.bulk_create(
        Participant(match=match, seat=seat, bot_id=v.bot_id, version=v) for seat, v in enumerate(seats)
    )
    return match


def create_validation_matches(version: BotVersion) -> list[Match]:
    return [_create_validation_match(version, n) for n in selectors.validation_player_counts(version.bot.game)]


def _live_matches(version: BotVersion, counts: list[int]) -> dict[int, Match]:
    """The newest non-cancelled validation match per player count."""
    found: dict[int, Match] = {}
    for match in version.validation_matches.exclude(status=Match.Status.CANCELLED).order_by("id"):
        if match.num_players in counts:
            found[match.num_players] = match
    return found


def _report(match: Match, me: Participant) -> list[str]:
    if not me.forfeit_reason:
        return [
            f"passed: {match.num_players}-player validation match {match.pk}: rank {me.rank} of {match.num_players}, "
            f"score {me.score} (/matches/{match.pk}/)"
        ]
    lines = [
        f"FAILED: {match.num_players}-player validation match {match.pk} ({match.game}, your bot in seat {me.seat}): "
        f"forfeit ({me.forfeit_reason}) at event {me.forfeit_event}: {me.forfeit_detail}",
    ]
    hint = HINTS.get(me.forfeit_reason)
    if hint:
        lines.append(f"  what to do: {hint}")
    # Web pages, not API paths: the page of the match opens the replay at
    # the forfeit, seen from the bot's seat (the site links these paths).
    lines.append(
        f"  the match: /matches/{match.pk}/#event={me.forfeit_event}&view=seat-{me.seat} (event {me.forfeit_event} "
        f"is the first one played for you by the default policy); your bot's whole log: /matches/{match.pk}/logs/{me.seat}/"
    )
    lines.append(f"  the rules a bot must keep: {FORFEIT_DOCS}")
    log_text = selectors.log_text(me)
    if log_text.strip():
        lines.append(f"--- your bot's stderr (last {LOG_TAIL} characters) ---\n{log_text[-LOG_TAIL:].rstrip()}\n--- end of stderr ---")
    else:
        lines.append("  (your bot wrote nothing to stderr)")
    return lines


def validate_version(version_id: int, worker: str | None = None, resume: bool = False) -> str:
    """Run (or resume) validation; returns the version's status afterwards
    ("validating" when another worker still plays one of its matches).

    ``resume`` (the message a re-queued or failed match sends): a pending
    version with no validation match queued or running is left alone, since
    after a failure for good, starting over is the retry's job, with its
    back-off."""
    from ladder.services.matches import run_queued_match

    with transaction.atomic():
        version = BotVersion.objects.select_for_update(of=("self",)).select_related("bot").get(pk=version_id)
        if version.status not in (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING):
            return version.status
        in_hand = version.validation_matches.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        if resume and version.status == BotVersion.Status.PENDING and not in_hand.exists():
            return version.status
        counts = selectors.validation_player_counts(version.bot.game)
        live = _live_matches(version, counts)
        for n in counts:
            if n not in live:
                live[n] = _create_validation_match(version, n)
        if version.status == BotVersion.Status.PENDING:
            version.status = BotVersion.Status.VALIDATING
            version.validation_log = _noted(version) + "validating: " + ", ".join(
                f"{n}-player match {live[n].pk} (/matches/{live[n].pk}/)" for n in counts
            )
            version.save(update_fields=["status", "validation_log"])
    for n in counts:
        run_queued_match(live[n].pk, worker)  # NOT_QUEUED when running elsewhere or done
    return conclude(version_id, counts)


def conclude(version_id: int, counts: list[int] | None = None) -> str:
    """Draw the verdict once every validation match is finished."""
    with transaction.atomic():
        version = BotVersion.objects.select_for_update(of=("self",)).select_related("bot").get(pk=version_id)
        if version.status not in (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING):
            return version.status  # someone else drew it
        counts = counts or selectors.validation_player_counts(version.bot.game)
        live = _live_matches(version, counts)
        failed_for_good = [m for m in live.values() if m.status == Match.Status.FAILED]
        if failed_for_good:
            # A platform failure after every attempt: validation starts over later.
            Match.objects.filter(pk__in=[m.pk for m in failed_for_good]).update(status=Match.Status.CANCELLED)
            errors = "; ".join(f"match {m.pk}: {m.error}" for m in failed_for_good)
            version.status = BotVersion.Status.PENDING
            version.validation_log = _noted(version) + (
                "validation could not be completed because of a platform problem (not your bot's fault); "
                f"it will be tried again automatically. ({errors})"
            )
            version.save(update_fields=["status", "validation_log"])
            transaction.on_commit(lambda: log.warning("validation interrupted", extra={"version_id": version_id, "error": errors[:500]}))
            raise_later = ValidationRetry(f"validation of version {version_id} interrupted: {errors}")
        else:
            raise_later = None
            unfinished = [m for m in live.values() if m.status != Match.Status.FINISHED]
            if unfinished or len(live) < len(counts):
                return BotVersion.Status.VALIDATING  # whoever finishes the last one concludes
            lines: list[str] = []
            failed = False
            for n in sorted(live):
                match = live[n]
                me = match.participants.get(version=version)
                failed = failed or bool(me.forfeit_reason)
                lines.extend(_report(match, me))
            if failed:
                lines.insert(0, f"version {version.number} of {version.bot.name} failed validation; fix the problem below and upload a new version.")
                version.status = BotVersion.Status.FAILED
                version.validation_log = _noted(version) + "\n".join(lines)
                version.save(update_fields=["status", "validation_log"])
            else:
                newer = version.bot.versions.filter(status=BotVersion.Status.ACTIVE, number__gt=version.number).first()
                if newer is not None:
                    lines.append(f"passed, but version {newer.number} is already active: this version is retired.")
                    version.status = BotVersion.Status.RETIRED
                    version.validation_log = _noted(version) + "\n".join(lines)
                    version.save(update_fields=["status", "validation_log"])
                else:
                    lines.append(
                        f"version {version.number} is now active on the {game_label(version.bot.game)} ladders."
                        + (" The bot is withdrawn: re-enter it to play." if version.bot.withdrawn else "")
                    )
                    version.validation_log = _noted(version) + "\n".join(lines)
                    version.save(update_fields=["validation_log"])
                    activate_version(version)
            status = BotVersion.objects.values_list("status", flat=True).get(pk=version_id)
            transaction.on_commit(lambda: log.info("validation done", extra={"version_id": version_id, "status": status}))
    if raise_later is not None:
        raise raise_later
    return status


def revalidate_stale(older_than: timedelta = STALE_PENDING) -> list[int]:
    """Versions left pending or validating (a lost message, a platform
    problem, a worker that died between its last match and the verdict) with
    no validation match in hand and no activity for ``older_than``: send
    their validation again."""
    cutoff = timezone.now() - older_than
    ids = []
    stuck = BotVersion.objects.filter(
        status__in=[BotVersion.Status.PENDING, BotVersion.Status.VALIDATING], bot__builtin=False, created__lt=cutoff
    )
    for version in stuck.order_by("id")[:50]:
        last = version.validation_matches.order_by("-id").first()
        if last is not None:
            if last.status in (Match.Status.QUEUED, Match.Status.RUNNING):
                continue  # in hand (the reaper / stale re-sender covers those)
            if (last.finished or last.enqueued or last.created) > cutoff:
                continue
        enqueue.validate_version(version.pk)
        ids.append(version.pk)
    return ids


__all__ = ["ValidationRetry", "conclude", "create_validation_matches", "revalidate_stale", "validate_version"]
