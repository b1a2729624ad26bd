"""What a bot's owner may do to a bot after creating it: edit its
description, withdraw it from its game's ladders and re-enter it, delete a
version that never played, delete a bot that never played a rated match.

History is never lost: a bot or version that played any match other than a
validation match (a ladder match, rated or not yet) is kept; its owner may
withdraw the bot instead. Withdrawn bots keep their ratings and matches, leave
the current standings (ladder.selectors.standings, the leaderboards) and are
never matched (ladder.services.matchmaking.eligible_bots).

Only the owner may change a bot (staff too use these rules: an operator who
must act on someone's bot does it in the Django admin, where it is logged)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ladder.caching import forget_cached_standings
from ladder.models import Bot, BotVersion, Match, Participant, Tournament, TournamentEntry
from ladder.services.errors import Conflict, Forbidden, InvalidInput

DESCRIPTION_LIMIT = 2000


def _check_owner(bot: Bot, user, doing: str) -> None:
    if not (user and user.is_authenticated and bot.owner_id == user.pk):
        raise Forbidden(f"only the bot's owner may {doing} it")


def edit_description(*, bot: Bot, user, description: str) -> Bot:
    _check_owner(bot, user, "edit")
    description = (description or "").replace("\r\n", "\n").strip()
    if len(description) > DESCRIPTION_LIMIT:
        raise InvalidInput(
            f"the description is {len(description)} characters long; the limit is {DESCRIPTION_LIMIT}: shorten it",
            "description",
        )
    Bot.objects.filter(pk=bot.pk).update(description=description)
    bot.description = description
    return bot


def update_bot(*, bot: Bot, user, description: str | None = None, withdrawn: bool | None = None) -> Bot:
    """The API's PATCH: any of the description and the withdrawal."""
    _check_owner(bot, user, "change")
    if description is not None:
        edit_description(bot=bot, user=user, description=description)
    if withdrawn is True:
        withdraw(bot=bot, user=user)
    elif withdrawn is False:
        reenter(bot=bot, user=user)
    return bot


def withdraw(*, bot: Bot, user) -> Bot:
    """Take the bot off its game's ladders (idempotent). Matches already
    queued or running for it are still played and rated."""
    _check_owner(bot, user, "withdraw")
    with transaction.atomic():
        locked = Bot.objects.select_for_update().get(pk=bot.pk)
        if locked.withdrawn is None:
            locked.withdrawn = timezone.now()
            locked.save(update_fields=["withdrawn"])
        forget_cached_standings(locked.game)
    bot.withdrawn = locked.withdrawn
    return bot


def reenter(*, bot: Bot, user) -> Bot:
    """Put a withdrawn bot back on its game's ladders (idempotent), with the
    ratings it had."""
    _check_owner(bot, user, "re-enter")
    with transaction.atomic():
        locked = Bot.objects.select_for_update().get(pk=bot.pk)
        if locked.withdrawn is not None:
            locked.withdrawn = None
            locked.save(update_fields=["withdrawn"])
        forget_cached_standings(locked.game)
    bot.withdrawn = None
    return bot


def _refuse_history(participations, what: str, advice: str) -> None:
    """Refuse (409) when these participations include a match other than a
    validation match (a ladder match, queued to finished): history."""
    played = participations.exclude(match__kind=Match.Kind.VALIDATION).count()
    if played:
        matches = f"{played} ladder match{'es' if played != 1 else ''}"
        raise Conflict(f"{what} has played {matches}: {advice}")


def _refuse_entries(entries, what: str) -> None:
    """Refuse (409, naming the event) when these event entries exist: the
    entry holds the bot and its frozen version (decision 190). Deleting
    does not withdraw the entry on the owner's behalf: an open event's
    entry is withdrawn first, in so many words; one in an event that has
    started is part of its field, kept as history."""
    entry = entries.select_related("tournament").order_by("tournament_id").first()
    if entry is None:
        return
    t = entry.tournament
    if t.status == Tournament.Status.OPEN:
        advice = (
            f"withdraw the entry first (on the event's page /tournaments/{t.pk}/, or "
            f"DELETE /api/tournaments/{t.pk}/entries/{entry.bot_id}/), then delete"
        )
    else:
        advice = "the event's field keeps it as history, so it cannot be deleted"
    raise Conflict(f"{what} is entered in the event {t.name!r} (id {t.pk}, {t.status}): {advice}")


def delete_files_on_commit(paths: list[tuple[object, str]]) -> None:
    """Remove stored files once the rows naming them are gone for good."""

    def remove() -> None:
        for storage, name in paths:
            try:
                storage.delete(name)
            except OSError:
                pass  # a file already gone is what we wanted

    transaction.on_commit(remove)


def _delete_validation(matches, versions: list[BotVersion]) -> None:
    """Delete validation matches (their seats too) and, once that commits,
    their replays and logs and the versions' packages."""
    matches = list(matches.prefetch_related("participants"))
    files = [(v.package.storage, v.package.name) for v in versions if v.package]
    for match in matches:
        if match.replay:
            files.append((match.replay.storage, match.replay.name))
        files.extend((p.log.storage, p.log.name) for p in match.participants.all() if p.log)
    Match.objects.filter(pk__in=[m.pk for m in matches]).delete()
    delete_files_on_commit(files)


def delete_version(*, version: BotVersion, user) -> None:
    """Delete a version that never played a match other than its validation
    matches (those go with it). Refused while it is being validated, and for
    the version the bot plays now."""
    bot = version.bot
    _check_owner(bot, user, "delete versions of")
    with transaction.atomic():
        Bot.objects.select_for_update().get(pk=bot.pk)
        version = BotVersion.objects.select_for_update().get(pk=version.pk)
        _refuse_history(
            Participant.objects.filter(version=version),
            f"version {version.number} of {bot.name}",
            "it is kept as history (upload a new version to replace it)",
        )
        _refuse_entries(TournamentEntry.objects.filter(version=version), f"version {version.number} of {bot.name}")
        if version.status == BotVersion.Status.VALIDATING:
            raise Conflict(
                f"version {version.number} of {bot.name} is being validated now: wait until it is active or failed, "
                "then delete it",
            )
        if Bot.objects.filter(pk=bot.pk, current_version=version).exists():
            raise Conflict(
                f"version {version.number} is the one {bot.name} plays on the ladders: upload a new version first, "
                "or withdraw the bot",
            )
        # Validation matches are still in use while a worker plays them.
        running = version.validation_matches.filter(status=Match.Status.RUNNING).exists()
        if running:
            raise Conflict(
                f"a validation match of version {version.number} is being played now: try again in a minute"
            )
        _delete_validation(version.validation_matches.all(), [version])
        version.delete()


def delete_bot(*, bot: Bot, user) -> None:
    """Delete a bot that never played a match other than validation matches,
    with its versions, ratings (all without games) and validation matches."""
    _check_owner(bot, user, "delete")
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=bot.pk)
        _refuse_history(
            Participant.objects.filter(bot=bot),
            bot.name,
            "its history stays, so it cannot be deleted; withdraw it from the ladders instead",
        )
        _refuse_entries(TournamentEntry.objects.filter(bot=bot), bot.name)
        versions = list(bot.versions.all())
        if any(v.status == BotVersion.Status.VALIDATING for v in versions) or Match.objects.filter(
            validation_of__bot=bot, status=Match.Status.RUNNING
        ).exists():
            raise Conflict(
                f"a version of {bot.name} is being validated now: wait until it is active or failed, then delete the bot",
            )
        _delete_validation(Match.objects.filter(validation_of__bot=bot), versions)
        Bot.objects.filter(pk=bot.pk).update(current_version=None)
        bot.versions.all().delete()
        bot.ratings.all().delete()
        bot.delete()
        forget_cached_standings(bot.game)

