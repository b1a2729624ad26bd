"""Bots and their versions: creation, upload (checked as a package before
anything is stored), activation, and cardroom's own built-in bots."""

from __future__ import annotations

import hashlib
import re

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from cardroom import packages
from ladder.models import GAME_CHOICES, Bot, BotVersion, Ladder
from ladder.services import enqueue, quotas
from ladder.services.errors import Conflict, InvalidInput, TooLarge
from ladder.services.ratings import ensure_ratings

SYSTEM_USERNAME = "cardroom"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{1,39}$")


def game_label(game: str) -> str:
    """A game's display name ("Allegra"), for messages."""
    return dict(GAME_CHOICES).get(game, game)


def with_article(word: str) -> str:
    """ "an Allegra bot", "a bot": the indefinite article a word takes."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def create_bot(*, owner, game: str, name: str, description: str = "") -> Bot:
    _check_new_bot(game, name)
    return _insert_bot(owner, game, name, description)


def create_bot_with_version(*, owner, game: str, name: str, description: str = "", filename: str, data: bytes) -> tuple[Bot, BotVersion]:
    """A new bot and its first version, together or not at all: a package
    that is refused leaves no empty bot behind (nor a public page)."""
    _check_new_bot(game, name)
    quotas.check_new_bot(owner)  # before the package check's work; again under the owner's lock
    safe_name, check = _checked_upload(owner, game, filename, data)
    with transaction.atomic():
        bot = _insert_bot(owner, game, name, description)
        return bot, _store_version(bot, safe_name, check, data)


def _check_new_bot(game: str, name: str) -> None:
    from engine import game_ids

    if game not in game_ids():
        raise InvalidInput(f"there is no game {game!r}: choose one of {', '.join(game_ids())}", "game")
    if not NAME_RE.match(name or ""):
        raise InvalidInput(
            "a bot name is 2-40 characters: letters, digits, '_', '.', '-', starting with a letter or digit", "name"
        )
    # Unique per game whatever the case ("Greedy" beside the built-in "greedy"
    # would pass for it); the constraint bot_name_unique_per_game_ci holds it under races.
    same = Bot.objects.filter(game=game, name__iexact=name).only("name", "builtin").first()
    if same is not None:
        kind = f"built-in {game_label(game)}" if same.builtin else game_label(game)
        whatever_case = "" if same.name == name else " (names are compared whatever the case)"
        raise InvalidInput(f"there is already {with_article(kind)} bot named {same.name!r}: choose another name{whatever_case}", "name")


def _insert_bot(owner, game: str, name: str, description: str) -> Bot:
    try:
        with transaction.atomic():
            quotas.lock_owner(owner)
            quotas.check_new_bot(owner)
            return Bot.objects.create(owner=owner, game=game, name=name, description=description or "")
    except IntegrityError:
        raise InvalidInput(
            f"there is already {with_article(game_label(game))} bot named {name!r}: choose another name", "name"
        ) from None


def check_package(filename: str, data: bytes) -> packages.UploadCheck:
    """Check an upload as the sandbox will load it: its sha256, runtime and
    the notes for its author."""
    try:
        return packages.inspect_upload(filename, data)
    except packages.PackageError as exc:
        raise InvalidInput(str(exc), "file") from None


def upload_version(*, bot: Bot, filename: str, data: bytes) -> BotVersion:
    """Store a new version (status pending) and queue its validation."""
    safe_name, check = _checked_upload(bot.owner, bot.game, filename, data)
    return _store_version(bot, safe_name, check, data)


def _checked_upload(owner, game: str, filename: str, data: bytes) -> tuple[str, packages.UploadCheck]:
    """The upload's checks (cardroom.packages', which `cardroom submit` runs
    too) and the owner's quotas: the stored name and what the checks found."""
    try:
        safe_name = packages.upload_name(filename, data, settings.CARDROOM_MAX_UPLOAD_BYTES)
    except packages.PackageTooLarge as exc:
        raise TooLarge(str(exc), "file") from None
    except packages.PackageError as exc:
        raise InvalidInput(str(exc), "file") from None
    quotas.check_upload(owner, game, len(data))  # before the package check's work
    return safe_name, check_package(safe_name, data)


def _store_version(bot: Bot, safe_name: str, check: packages.UploadCheck, data: bytes) -> BotVersion:
    sha256 = check.sha256
    with transaction.atomic():
        quotas.lock_owner(bot.owner)
        quotas.check_upload(bot.owner, bot.game, len(data))  # again, under the owner's lock
        Bot.objects.select_for_update().get(pk=bot.pk)  # serialises version numbers
        same = bot.versions.filter(sha256=sha256).exclude(status=BotVersion.Status.FAILED).first()
        if same is not None:
            raise Conflict(
                f"{safe_name}: this exact package is already version {same.number} of {bot.name}: change the bot, then upload it",
                "file",
            )
        number = (bot.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        notes = "\n".join(f"note: {note}" for note in check.notes)
        version = BotVersion(
            bot=bot, number=number, filename=safe_name, sha256=sha256, size=len(data), runtime=check.runtime,
            upload_notes=notes, validation_log=notes,
        )  # fmt: skip
        version.package.save(f"{bot.game}-{bot.name}-v{number}-{safe_name}", ContentFile(data), save=False)
        version.save()
        transaction.on_commit(lambda: _queue_validation(version.pk))
    return version


def _queue_validation(version_id: int) -> None:
    enqueue.validate_version(version_id)


def activate_version(version: BotVersion) -> None:
    """The version takes over its bot on every ladder of its game; the
    previous active version retires (its rating carries over)."""
    with transaction.atomic():
        bot = Bot.objects.select_for_update().get(pk=version.bot_id)
        bot.versions.filter(status=BotVersion.Status.ACTIVE).exclude(pk=version.pk).update(status=BotVersion.Status.RETIRED)
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE, activated=timezone.now())
        bot.current_version_id = version.pk
        bot.save(update_fields=["current_version"])
        ensure_ratings_for_game(bot)


def system_user():
    user, created = get_user_model().objects.get_or_create(username=SYSTEM_USERNAME)
    if created:
        user.set_unusable_password()
        user.save()
    return user


# a fresh installation's ladders: every game of the engine's, at 2 and 4 players
DEFAULT_LADDERS = [(f"{name}, {players} players", game, players) for game, name in GAME_CHOICES for players in (2, 4)]


def install_defaults() -> None:
    """A fresh installation plays at once: the default ladders and the
    built-in bots on them (idempotent; ladders only on an empty database)."""
    from bots import DESCRIPTIONS, builtin_program
    from engine import game_ids

    owner = system_user()
    if not Ladder.objects.exists():
        for name, game, players in DEFAULT_LADDERS:
            Ladder.objects.create(name=name, game=game, players_per_match=players)
    for game in game_ids():
        for name in settings.CARDROOM_BUILTIN_BOTS:
            bot, _ = Bot.objects.get_or_create(
                game=game, name=name, defaults={"owner": owner, "builtin": True, "description": f"built-in: {DESCRIPTIONS[name]}"}
            )
            program = builtin_program(name, game)
            data = program.read_bytes()
            sha256 = hashlib.sha256(data).hexdigest()
            if bot.current_version and bot.current_version.sha256 == sha256:
                ensure_ratings_for_game(bot)
                continue
            number = (bot.versions.aggregate(n=Max("number"))["n"] or 0) + 1
            version = BotVersion(bot=bot, number=number, filename=program.name, sha256=sha256, size=len(data))
            version.package.save(f"builtin-{game}-{name}-v{number}.py", ContentFile(data), save=False)
            version.validation_log = "built-in bot: trusted, not validated"
            version.save()
            activate_version(version)


def ensure_ratings_for_game(bot: Bot) -> None:
    for ladder in Ladder.objects.filter(game=bot.game):
        ensure_ratings(ladder, [bot.pk])
