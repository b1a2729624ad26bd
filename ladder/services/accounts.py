"""Accounts: what a user may do to their own account beyond signing in
(password change and reset are Django's own views, in ladder.web.accounts).

Deleting an account keeps its history: the user row stays, under a tombstone
name no sign-up can choose, without a password, e-mail or token, and every
bot of it is withdrawn from the ladders (its matches, ratings and replays
stay as they were, the owner shown as the tombstone)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from ladder.models import Bot


def tombstone_name(user_id: int) -> str:
    # Square brackets: no username validator (Django's, the API's) accepts
    # them, so no one can sign up as a deleted account.
    return f"[deleted-{user_id}]"


def delete_account(user) -> None:
    with transaction.atomic():
        games = set(Bot.objects.filter(owner=user).values_list("game", flat=True))
        Bot.objects.filter(owner=user, withdrawn__isnull=True).update(withdrawn=timezone.now())
        Token.objects.filter(user=user).delete()
        user.username = tombstone_name(user.pk)
        user.email = ""
        user.first_name = ""
        user.last_name = ""
        user.is_active = False
        user.is_staff = False
        user.is_superuser = False
        user.set_unusable_password()  # every session of it ends (its auth hash changes)
        user.save()
        from ladder.web.selectors import forget_cached_standings

        for game in games:
            transaction.on_commit(lambda game=game: forget_cached_standings(game))
