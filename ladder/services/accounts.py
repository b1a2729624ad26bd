"""Accounts: one set of username rules for the web form and the API.

A username is NFKC-normalised and then must be 3-40 letters (of one
script), digits and ``_ . @ + -``. It must not be a reserved name, nor equal
an existing one once case-folded, nor look like one: its *skeleton* (each
character replaced by the Latin or ASCII character it is confusable with,
from the Unicode confusables table that confusable-homoglyphs ships, then
case-folded, i, l, 1 and | one class, 0 read as o, "rn" as "m", and the
separators _ . @ + - left out, so that "a_l_i_c_e" and "alice." are "alice")
must be new too: one person per skeleton (decision 192). Names that read as a tombstone's ("deleted-6") are reserved. UsernameClaim holds the
folded form and the skeleton of every account under unique constraints, so
two sign-ups racing for look-alike names cannot both win.

Deleting an account keeps its history: the user row stays, under a tombstone
name no sign-up can choose, without a password, e-mail or token, and every
bot of it is withdrawn from the ladders (its matches, ratings and replays
stay as they were, the owner shown as the tombstone). The replays of its
casual matches, which name the person, are rewritten to name the tombstone
(one that finishes later names it as it is recorded), and every cached page
and replay that could show the name is dropped (decision 191)."""

from __future__ import annotations

import gzip
import json
import logging
import re
import unicodedata

from confusable_homoglyphs import categories, confusables
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from ladder import caching
from ladder.caching import forget_cached_standings
from ladder.client_address import fold_username
from ladder.models import Bot, CasualSeat, Match, UsernameClaim, VerifiedEmail
from ladder.services.bot_management import delete_files_on_commit
from ladder.services.bots import SYSTEM_USERNAME
from ladder.services.errors import InvalidInput
from ladder.services.matches import replay_file_bytes

log = logging.getLogger("cardroom.accounts")

USERNAME_MIN, USERNAME_MAX = 3, 40
USERNAME_RE = re.compile(r"^[\w.@+-]+\Z")
USERNAME_RULES = f"a username is {USERNAME_MIN}-{USERNAME_MAX} characters: letters (of one script), digits and _ . @ + -"
# ASCII characters TR39 confuses with another ASCII character (before case
# folding: a capital I looks like a small l).
_ASCII_LOOKALIKES = {"0": "o", "1": "l", "I": "l", "|": "l"}
# After case folding: case does not count, so any i may be written I, which
# looks like l and 1. Mapped before folding only, a reserved "admin" kept its
# i while "ADMlN" became "admln", and the two did not meet.
_FOLDED_CLASSES = str.maketrans({"i": "l", "1": "l", "|": "l", "0": "o"})
# The tombstones' name without its brackets: "deleted-6" would pass for the
# deleted account 6 (its look-alikes are caught through the skeleton).
_TOMBSTONE_LOOKALIKE = re.compile(r"deleted[-_.+@]*[0-9lo]*")
# The separators a username may hold: none of them makes another name
# ("alice_", "_alice", "a.lice"). Taken out last, after the look-alikes
# (a confusable dash or dot is one of them by then), so that a stored
# skeleton without them is exactly the new one (migration 0009).
SEPARATORS = "_.@+-"
_NO_SEPARATORS = str.maketrans("", "", SEPARATORS)
LOOKALIKE_RULES = (
    "names that differ only in case, in the separators _ . @ + -, or in characters that look alike "
    "(0 and o, 1, l and I, rn and m, Latin and Cyrillic a) are one name"
)


def normalise(name: str) -> str:
    """The form a username is stored in (Django's own username normalisation)."""
    return unicodedata.normalize("NFKC", name or "")


def _prototype(char: str) -> str:
    if char in _ASCII_LOOKALIKES:
        return _ASCII_LOOKALIKES[char]
    if char.isascii():
        return char
    for glyph in confusables.confusables_data.get(char, ()):
        target = glyph["c"]
        if len(target) == 1 and target.isascii():
            return _ASCII_LOOKALIKES.get(target, target)
    return char


def skeleton(name: str) -> str:
    """What ``name`` looks like: equal skeletons, names a reader could mistake."""
    shape = "".join(_prototype(c) for c in normalise(name)).casefold().translate(_FOLDED_CLASSES)
    return shape.replace("rn", "m").replace("vv", "w").translate(_NO_SEPARATORS)


def _reserved() -> dict[str, str]:
    names = {*settings.CARDROOM_RESERVED_USERNAMES, SYSTEM_USERNAME}
    out = {}
    for reserved in names:
        out[fold_username(reserved)] = reserved
        out[skeleton(reserved)] = reserved
    return out


def check_username(name: str) -> str:
    """The username to store for ``name``, or a ServiceError (field "username")
    saying what is wrong with it."""
    name = normalise(name)
    if not USERNAME_MIN <= len(name) <= USERNAME_MAX or not USERNAME_RE.match(name):
        raise InvalidInput(USERNAME_RULES, "username")
    if not skeleton(name):
        raise InvalidInput(f"{USERNAME_RULES}, with at least one letter or digit", "username")
    scripts = categories.unique_aliases(name) - {"COMMON"}
    if len(scripts) > 1:
        raise InvalidInput(
            f"the username {name!r} mixes scripts ({', '.join(sorted(scripts))}): use the letters of one script", "username"
        )
    folded, shape = fold_username(name), skeleton(name)
    reserved = _reserved()
    if folded in reserved or shape in reserved or _TOMBSTONE_LOOKALIKE.fullmatch(shape):
        raise InvalidInput(f"the username {name!r} is reserved: choose another", "username")
    # The refusals name no other account: the clash may be a deleted one,
    # which stays anonymous.
    if UsernameClaim.objects.filter(folded=folded).exists():
        raise InvalidInput(f"the username {name!r} is taken (case does not count)", "username")
    if UsernameClaim.objects.filter(skeleton=shape).exists():
        raise InvalidInput(f"the username {name!r} is too like an existing username ({LOOKALIKE_RULES}): choose another", "username")
    return name


def create_account(username: str, password: str):
    """A new user with its username claim (web sign-up and API register)."""
    name = check_username(username)
    try:
        with transaction.atomic():
            user = get_user_model().objects.create_user(name, password=password)
            claim_username(user, strict=True)
    except IntegrityError:  # a racing sign-up took it (or a look-alike) first
        raise InvalidInput(f"the username {name!r} is taken", "username") from None
    return user


def claim_username(user, *, strict: bool = False) -> None:
    """Record ``user``'s username forms (after every save of a user: the admin
    and createsuperuser make users too, and may pick any name). With strict,
    a clash raises IntegrityError; else it is logged and that user keeps no
    claim (an account made outside the public forms)."""
    if user.pk is not None and user.username == tombstone_name(user.pk):
        # A deleted account keeps the claim of the name it had: nobody can
        # sign up as it (or as a look-alike) and pass for its old bots' author.
        return
    keys = {"folded": fold_username(user.username), "skeleton": skeleton(user.username)}
    current = UsernameClaim.objects.filter(user=user).values("folded", "skeleton").first()
    if current == keys:
        return
    try:
        with transaction.atomic():
            UsernameClaim.objects.update_or_create(user=user, defaults=keys)
    except IntegrityError:
        if strict:
            raise
        log.warning("username %r looks like an existing one: it keeps no username claim", user.username)


def api_token(user) -> Token:
    """``user``'s API token, made on first use (signing up, a login through
    the API, the account page); the same token every time after that."""
    token, _ = Token.objects.get_or_create(user=user)
    return token


def rotate_token(user) -> Token:
    """A new API token for ``user``; the old one stops working (asked for on
    the account page, and after every password change or reset: whoever
    knew the old password may have taken the token too)."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def tombstone_name(user_id: int) -> str:
    # Square brackets: no username validator (Django's, the API's) accepts
    # them, so no one can sign up as a deleted account.
    return f"[deleted-{user_id}]"


def delete_account(user) -> None:
    with transaction.atomic():
        # The account's row first: a casual match being recorded reads the
        # person's name under it (ladder.services.matches), so it names the
        # tombstone, or is finished before its replay is looked for below.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        games = set(Bot.objects.filter(owner=user).values_list("game", flat=True))
        Bot.objects.filter(owner=user, withdrawn__isnull=True).update(withdrawn=timezone.now())
        Token.objects.filter(user=user).delete()
        VerifiedEmail.objects.filter(user=user).delete()
        user.username = tombstone_name(user.pk)
        user.email = ""
        user.first_name = ""
        user.last_name = ""
        user.is_active = False
        user.is_staff = False
        user.is_superuser = False
        user.set_unusable_password()  # every session of it ends (its auth hash changes)
        user.save()
        renamed = rename_in_replays(user)
        for game in games:
            forget_cached_standings(game)
        # Pages that show an owner or a person (ratings, matches), and the
        # replays kept under the people generation.
        caching.bump(caching.MATCHES, caching.RATINGS, caching.PEOPLE)
        transaction.on_commit(lambda: caching.forget_replays(renamed))


def rename_in_replays(user) -> list[int]:
    """Rewrite the replay of each finished casual match of ``user`` to name
    the seat by the tombstone (a new file: the old one is removed once this
    commits; rolled back, the match keeps it). The ids of the matches."""
    renamed, old_files = [], []
    seats = CasualSeat.objects.filter(user=user, match__status=Match.Status.FINISHED).order_by("match_id")
    for seat in seats:
        match = Match.objects.select_for_update().get(pk=seat.match_id)
        if not match.replay:
            continue
        try:
            with match.replay.open("rb") as f:
                doc = json.loads(gzip.decompress(f.read()))
        except OSError:
            log.warning("a replay to rename is missing from storage", extra={"match_id": match.pk})
            continue
        player = doc["players"][seat.seat]
        if player["name"] == user.username:
            continue
        player["name"] = user.username
        old_files.append((match.replay.storage, match.replay.name))
        match.replay.save(f"match-{match.pk}.json.gz", ContentFile(replay_file_bytes(doc)), save=False)
        Match.objects.filter(pk=match.pk).update(replay=match.replay.name)
        renamed.append(match.pk)
    delete_files_on_commit(old_files)
    return renamed
