"""Casual matches: a signed-in person plays one seat against bots
(issue 24; decisions 130-136, 202-206, docs/ladder.md "Playing a bot
yourself").

The match is played by the ordinary runner on a worker of the casual queue
(ladder.tasks.play_casual_match), its bots in the sandbox, frozen between
their moves as in any match. The person's seat is a Player of the runner,
``HumanSeat`` (ladder.worker.casual, beside the casual queue's task): for
each decision it publishes the protocol line a bot in the seat would be
sent (cardroom.players' own builders) to the match's CasualSeat row, then
waits for the answer the person's page posts through
the API (``answer``), which was judged there by the same bounded reply
parse and the same engine rules a bot's reply meets (an illegal answer is a
400 and changes nothing; a bot's would be a forfeit).

Clocks (decisions 132, 205): CARDROOM_CASUAL_MOVE_SECONDS a move and
CARDROOM_CASUAL_TOTAL_SECONDS in all; no page asking for the seat for
CARDROOM_CASUAL_IDLE_SECONDS (a closed or forgotten tab) forfeits at once
(decision 133). A forfeited seat is played by the default policy, as a
bot's is, so the match runs to its end in moments and its bots exit.

Holding (decision 202): while the person thinks, the match's thread sleeps
with no database connection; the process's hub (ladder.services.casual_hub)
reads every waiting seat and renews every lease. Fair access (decisions
203, 204): queued matches start in ``fair_order``, and open matches are
limited per user and per network.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Count, Max
from django.utils import timezone

from cardroom.players import BotFault, action_of, encode_message
from engine import game_ids, get_game_class
from engine.core import IllegalActionError
from engine.replay import state_after
from ladder import caching, selectors
from ladder.models import Bot, BotVersion, CasualSeat, Match, Participant
from ladder.services import matches
from ladder.services.errors import Conflict, Forbidden, InvalidInput, NotFound, QuotaExceeded

OPEN = (Match.Status.QUEUED, Match.Status.RUNNING)
BUILTIN_PREFIX = "builtin:"
# A page's poll is written at most this often (the idle clock needs no finer grain).
POLL_WRITE_SECONDS = 2.0


# -- starting a match ------------------------------------------------------------------


def _opponent_version(game: str, user, opponent: Any, index: int) -> BotVersion:
    """The version an opponent entry names: a bot id, or "builtin:NAME"."""
    field = "opponents"
    where = f"opponents[{index}]"
    if isinstance(opponent, str) and opponent.startswith(BUILTIN_PREFIX):
        name = opponent[len(BUILTIN_PREFIX) :]
        bot = Bot.objects.filter(game=game, name=name, builtin=True).select_related("current_version").first()
        if bot is None:
            names = sorted(Bot.objects.filter(game=game, builtin=True).values_list("name", flat=True))
            raise InvalidInput(f"{where}: there is no built-in {game} bot {name!r} (the built-ins: {', '.join(names)})", field)
    elif type(opponent) is int:
        bot = Bot.objects.filter(pk=opponent).select_related("current_version").first()
        if bot is None or (bot.withdrawn is not None and bot.owner_id != user.pk):
            raise InvalidInput(f"{where}: no bot with id {opponent} that you may play (withdrawn bots play no one)", field)
        if bot.game != game:
            raise InvalidInput(f"{where}: bot {opponent} ({bot.name}) plays {bot.game}, not {game}", field)
    else:
        raise InvalidInput(f"{where}: an opponent is a bot id (a whole number) or \"builtin:NAME\", not {json.dumps(opponent)[:60]}", field)
    version = bot.current_version
    if version is None or version.status != BotVersion.Status.ACTIVE:
        raise InvalidInput(f"{where}: bot {bot.name} has no active version to play (it has not passed validation)", field)
    return version


def address_key(address: str | None) -> str:
    """The network ``address`` is in, as the limits count it: an IPv4
    address itself, an IPv6 address's /64 (what one subscriber is given),
    kept as a keyed digest so the table never holds an address ("" for
    none: a request made in-process)."""
    if not address:
        return ""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return ""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    network = ipaddress.ip_network(f"{ip}/{64 if ip.version == 6 else 32}", strict=False)
    return hmac.new(settings.SECRET_KEY.encode(), f"casual-address:{network}".encode(), hashlib.sha256).hexdigest()[:32]


def _open_casual() -> Any:
    return Match.objects.filter(kind=Match.Kind.CASUAL, status__in=OPEN)


def check_open_limit(user) -> None:
    """At most CARDROOM_CASUAL_OPEN_PER_USER casual matches queued or
    running per user (call holding the user's row lock)."""
    limit = settings.CARDROOM_CASUAL_OPEN_PER_USER
    have = selectors.open_casual_matches(user).count()
    if have >= limit:
        raise QuotaExceeded(
            "casual_matches",
            limit,
            f"quota reached (casual matches open): you have {have} casual matches under way and the limit is {limit} "
            "(CARDROOM_CASUAL_OPEN_PER_USER). Finish one, or leave it: an idle match is forfeited after "
            f"{settings.CARDROOM_CASUAL_IDLE_SECONDS} s without its page open.",
            retry_later=True,
        )


def check_address_limit(key: str) -> None:
    """At most CARDROOM_CASUAL_OPEN_PER_ADDRESS casual matches queued or
    running started from one network, whatever the accounts (decision 204;
    call holding the address's lock, ``_lock_address``)."""
    limit = settings.CARDROOM_CASUAL_OPEN_PER_ADDRESS
    have = _open_casual().filter(casual_seat__address_key=key).count() if key else 0
    if have >= limit:
        raise QuotaExceeded(
            "casual_matches_per_address",
            limit,
            f"quota reached (casual matches open from your network): {have} casual matches started from your address are "
            f"under way and the limit is {limit} (CARDROOM_CASUAL_OPEN_PER_ADDRESS), whichever accounts started them. "
            "Finish one, or wait for one to end.",
            retry_later=True,
        )


def _lock_address(key: str) -> None:
    """Serialise starts from one network, as the user's row lock does a
    user's (SQLite serialises every write transaction anyway)."""
    if key and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int(key[:15], 16)])


def start(*, user, game: Any, num_players: Any, opponents: Any, seat: Any = None, address: str | None = None) -> Match:
    """Create a casual match with ``user`` in ``seat`` (random when None)
    and the ``opponents`` in the other seats in order, and queue it.
    ``address``: the client's (ladder.client_address.client_address), for the
    per-address limit."""
    if game not in game_ids():
        raise InvalidInput(f"game must be one of {', '.join(game_ids())}, not {json.dumps(game)[:40]}", "game")
    cls = get_game_class(game)
    if type(num_players) is not int or not cls.min_players <= num_players <= cls.max_players:
        raise InvalidInput(f"num_players: {cls.name} is played by {cls.min_players} to {cls.max_players} players", "num_players")
    if not isinstance(opponents, list) or len(opponents) != num_players - 1:
        raise InvalidInput(f"opponents must list {num_players - 1} bots (one for each seat but yours)", "opponents")
    if seat is None:
        seat = secrets.randbelow(num_players)
    elif type(seat) is not int or not 0 <= seat < num_players:
        raise InvalidInput(f"seat must be a seat number from 0 to {num_players - 1}", "seat")
    versions = [_opponent_version(game, user, opponent, i) for i, opponent in enumerate(opponents)]
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one start at a time per user
        check_open_limit(user)
        key = address_key(address)
        _lock_address(key)
        check_address_limit(key)
        match = Match.objects.create(
            kind=Match.Kind.CASUAL, game=game, options={}, num_players=num_players, seed=secrets.randbelow(2**62)
        )
        bot_seats = [s for s in range(num_players) if s != seat]
        Participant.objects.bulk_create(
            Participant(match=match, seat=s, bot_id=v.bot_id, version=v) for s, v in zip(bot_seats, versions, strict=True)
        )
        CasualSeat.objects.create(match=match, user=user, seat=seat, address_key=key)
        matches.enqueue_after_commit(match.pk)
    return match


def cancel_abandoned() -> list[int]:
    """Queued casual matches whose person left before a casual worker took
    them (no page asked for the seat for CARDROOM_CASUAL_IDLE_SECONDS) are
    cancelled: nobody would play them, and they would hold their person's
    open-match quota (the reaper's sweep runs this)."""
    cutoff = timezone.now() - timedelta(seconds=settings.CARDROOM_CASUAL_IDLE_SECONDS)
    stale = list(
        Match.objects.filter(kind=Match.Kind.CASUAL, status=Match.Status.QUEUED, casual_seat__last_poll__lt=cutoff).values_list("pk", flat=True)[:500]
    )
    cancelled = [pk for pk in stale if Match.objects.filter(pk=pk, status=Match.Status.QUEUED).update(status=Match.Status.CANCELLED)]
    if cancelled:
        caching.bump(caching.MATCHES)
    return cancelled


# -- the person's side -------------------------------------------------------------------


def seen(seat: CasualSeat) -> None:
    """The owner's page asked for the seat: the idle clock starts again."""
    now = timezone.now()
    if (now - seat.last_poll).total_seconds() >= POLL_WRITE_SECONDS:
        CasualSeat.objects.filter(pk=seat.pk, last_poll__lt=now).update(last_poll=now)
        seat.last_poll = now


def _owned_seat_for_update(user, match_id: int) -> CasualSeat:
    seat = CasualSeat.objects.select_for_update().filter(pk=match_id).first()
    if seat is None:
        raise NotFound(f"match {match_id} is not a casual match (POST /api/play/ starts one)")
    if seat.user_id != user.pk:
        raise Forbidden(f"only the person who started casual match {match_id} may play its seat")
    return seat


def answer(*, user, match_id: int, body: Any) -> int:
    """Accept the person's answer ``body`` ({"action": {…}, "decision"?: n})
    to the seat's current decision, judged as a bot's reply is; returns the
    decision answered. Refusals change nothing: 400 for a bad or illegal
    action (the engine's reason), 409 for an answer that comes too late (the
    decision named is not the current one, or it is answered already)."""
    if not isinstance(body, dict) or "action" not in body:
        raise InvalidInput('send {"action": {…}} (and optionally "decision": the decision number it answers)', "action")
    extra = set(body) - {"action", "decision"}
    if extra:
        raise InvalidInput(f"unknown field {sorted(extra)[0]!r}: the body holds 'action' and optionally 'decision'", sorted(extra)[0])
    decision = body.get("decision")
    if decision is not None and (type(decision) is not int or decision < 1):
        raise InvalidInput("decision must be a decision number (a whole number from 1), as GET /api/play/{id}/ gives it", "decision")
    try:
        # The reply parse a bot's line meets (its bounds, its shape rules).
        action = action_of(encode_message({"type": "action", "action": body["action"]}).rstrip(b"\n"))
    except BotFault as exc:
        raise InvalidInput(f"action: {exc.detail}", "action") from None
    with transaction.atomic():
        seat = _owned_seat_for_update(user, match_id)
        match = Match.objects.only("status", "game", "num_players", "options").get(pk=match_id)
        if decision is not None and decision != seat.decision:
            raise Conflict(
                f"decision {decision} is not the seat's current decision ({seat.decision}): it was answered already "
                "(by another tab?) or the match moved on; GET the seat again",
                "decision",
            )
        awaits_act = bool(seat.message) and json.loads(seat.message)["type"] == "act"
        if match.status != Match.Status.RUNNING or not awaits_act or seat.answer is not None:
            why = "the match is over" if match.status not in OPEN else "it is not your move (others act, or your answer is in)"
            raise Conflict(f"no action is awaited from your seat now: {why}")
        state = state_after(match.game, match.num_players, match.options, seat.events)
        try:
            state.apply(seat.seat, action)
        except IllegalActionError as exc:
            raise InvalidInput(f"illegal action: {exc.reason}", "action") from None
        seat.answer = action
        seat.last_poll = max(seat.last_poll, timezone.now())
        seat.save(update_fields=["answer", "last_poll"])
    return seat.decision


# How many queued matches the fair order looks at (the oldest first).
FAIR_WINDOW = 1000


def fair_order(limit: int = 20) -> list[int]:
    """The queued casual matches in the order they should start (decision
    203): first those whose person has the fewest casual matches running,
    then whose network has the fewest, then the earliest "turn", which is
    when the match was queued or, if later, when its person's last casual
    match started (so a person's next match queues behind the first matches
    of the others waiting, round-robin), then the oldest."""
    queued = list(
        _open_casual()
        .filter(status=Match.Status.QUEUED)
        .order_by("id")
        .values_list("id", "created", "casual_seat__user_id", "casual_seat__address_key")[:FAIR_WINDOW]
    )
    if not queued:
        return []
    running = _open_casual().filter(status=Match.Status.RUNNING)
    by_user = dict(running.order_by().values_list("casual_seat__user_id").annotate(n=Count("id")))
    by_address = dict(running.exclude(casual_seat__address_key="").order_by().values_list("casual_seat__address_key").annotate(n=Count("id")))
    users = {user for _, _, user, _ in queued}
    last_start = dict(
        Match.objects.filter(kind=Match.Kind.CASUAL, casual_seat__user_id__in=users, started__isnull=False)
        .order_by()
        .values_list("casual_seat__user_id")
        .annotate(last=Max("started"))
    )

    def turn(row):
        match_id, created, user, key = row
        since = max(created, last_start.get(user, created))
        return (by_user.get(user, 0), by_address.get(key, 0) if key else 0, since, match_id)

    return [row[0] for row in sorted(queued, key=turn)[:limit]]
