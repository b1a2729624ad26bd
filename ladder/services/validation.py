"""Validation on upload: a new version plays real matches in the sandbox
against the built-in bots, at every player count its game's ladders use,
before it may play on a ladder."""

from __future__ import annotations

import secrets

from django.db import transaction

from ladder.models import Bot, BotVersion, Ladder, Match, Participant
from ladder.services.bots import activate_version

LOG_TAIL = 4000


class ValidationRetry(Exception):
    """A platform problem interrupted validation; try again later."""


def _opponents(game: str, count: int) -> list[BotVersion]:
    builtins = list(
        BotVersion.objects.filter(bot__game=game, bot__builtin=True, status=BotVersion.Status.ACTIVE)
        .select_related("bot")
        .order_by("bot__name")
    )
    if not builtins:
        raise ValidationRetry(f"no built-in {game} bots are installed (run manage.py migrate)")
    return [builtins[i % len(builtins)] for i in range(count)]


def player_counts(game: str) -> list[int]:
    counts = sorted(set(Ladder.objects.filter(game=game, active=True).values_list("players_per_match", flat=True)))
    return counts or [2]


def create_validation_matches(version: BotVersion) -> list[Match]:
    matches = []
    for n in player_counts(version.bot.game):
        ladder = Ladder.objects.filter(game=version.bot.game, players_per_match=n, active=True).first()
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
        )
        Participant.objects.bulk_create(
            Participant(match=match, seat=seat, bot_id=v.bot_id, version=v) for seat, v in enumerate(seats)
        )
        matches.append(match)
    return matches


def _read_log(participant: Participant) -> str:
    import gzip

    if not participant.log:
        return ""
    with participant.log.open("rb") as f:
        return gzip.decompress(f.read()).decode("utf-8", errors="replace")


def validate_version(version_id: int) -> str:
    """Run (or resume) validation; returns the version's new status."""
    from ladder.services.matches import run_queued_match

    with transaction.atomic():
        version = BotVersion.objects.select_for_update().select_related("bot").get(pk=version_id)
        if version.status not in (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING):
            return version.status
        version.status = BotVersion.Status.VALIDATING
        version.save(update_fields=["status"])
        matches = list(version.validation_matches.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING, Match.Status.FINISHED]))
        if not matches:
            matches = create_validation_matches(version)
    for match in matches:
        if match.status == Match.Status.QUEUED:
            run_queued_match(match.pk)
    lines: list[str] = []
    failed = False
    for match in Match.objects.filter(pk__in=[m.pk for m in matches]).order_by("num_players"):
        if match.status != Match.Status.FINISHED:
            if match.status == Match.Status.FAILED:
                # A platform failure after every attempt: validation starts over next time.
                Match.objects.filter(pk=match.pk).update(status=Match.Status.CANCELLED)
            BotVersion.objects.filter(pk=version_id).update(status=BotVersion.Status.PENDING)
            raise ValidationRetry(f"validation match {match.pk} did not finish ({match.status}): {match.error}")
        me = match.participants.get(version=version)
        if me.forfeit_reason:
            failed = True
            log_text = _read_log(me)
            lines.append(
                f"FAILED: {match.num_players}-player validation match {match.pk}: forfeit ({me.forfeit_reason}) "
                f"at event {me.forfeit_event}: {me.forfeit_detail}"
            )
            if log_text.strip():
                lines.append(f"--- your bot's stderr (last {LOG_TAIL} characters) ---\n{log_text[-LOG_TAIL:]}")
        else:
            lines.append(f"passed: {match.num_players}-player validation match {match.pk}: rank {me.rank} of {match.num_players}")
    status = BotVersion.Status.FAILED if failed else BotVersion.Status.ACTIVE
    BotVersion.objects.filter(pk=version_id).update(validation_log="\n".join(lines))
    if failed:
        BotVersion.objects.filter(pk=version_id).update(status=status)
    else:
        activate_version(version)
    return status


def revalidate_stale() -> list[int]:
    """Versions left pending (a lost message, a platform problem): queue them again."""
    from ladder.tasks import validate_version as task

    ids = list(BotVersion.objects.filter(status=BotVersion.Status.PENDING, bot__builtin=False).values_list("pk", flat=True)[:50])
    for pk in ids:
        task.delay(pk)
    return ids


__all__ = ["Bot", "ValidationRetry", "create_validation_matches", "revalidate_stale", "validate_version"]
