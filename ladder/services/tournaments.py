"""Events: create one (staff), schedule its matches, follow them to the end.

The schedule is cardroom.tournament's (the command line's too). Matches are
ordinary ``Match`` rows of kind ``tournament`` and run through the ladder's
own machinery (ladder.services.matches: leased claim, exactly-once
recording), so a worker killed mid-event loses nothing. They never touch
ratings (record_result applies ratings to ladder matches only).

Delivery: an event keeps at most CARDROOM_TOURNAMENT_IN_FLIGHT of its matches
sent to the broker at a time (a field of 1,000 may schedule hundreds of
thousands); each recorded result sends the next ones, and the periodic sweep
(``feed_all``) re-sends what a lost message or a restart left behind. The
messages go to their own queue (CARDROOM_TOURNAMENT_QUEUE), which a worker
takes its turn from like the ladder's (docs/operations.md, "Queues and their
shares"); they are sent by ladder.services.enqueue, as the ladder's are
(this module never reaches into ladder.services.matches; what an event's
match does differently is its policy's, ladder.services.match_kinds).

A Swiss round is scheduled, in the transaction that records the last result
of the round before, from the standings so far.

Standings: computed when results come in and stored (TournamentStandings),
never on a request (a 128-entry round robin's took a second or more). Each
recorded result counts in ``Tournament.results_recorded`` in its own
transaction; once it commits, the worker that recorded it refreshes the
stored document (``refresh_standings``) unless another refresh is under way
or one ran less than its spacing ago: CARDROOM_STANDINGS_REFRESH_SECONDS, or
ten times what the last computation took, so that a big event spends at most
a tenth of one worker on its standings. The periodic sweep refreshes any
document left behind, and the event's last result stores the final table in
the transaction that records it.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.utils import timezone

from cardroom.luck import luck_of
from cardroom.tournament import event, schedule
from cardroom.tournament.schedule import EventSpec, ScheduleError
from cardroom.tournament.standings import DECIDERS, Outcome
from engine import get_game_class
from engine.core import EngineError
from ladder import caching, selectors
from ladder.models import (
    Bot,
    BotVersion,
    Match,
    Participant,
    Tournament,
    TournamentEntry,
    TournamentMatch,
    TournamentStandings,
    TournamentStandingsPage,
)
from ladder.services import enqueue
from ladder.services.bots import SYSTEM_USERNAME
from ladder.services.errors import Conflict, Forbidden, InvalidInput, NotFound

log = logging.getLogger("cardroom.tournaments")

DONE = (Match.Status.FINISHED, Match.Status.FAILED, Match.Status.CANCELLED)
CHUNK = 2000
# A refresh of the standings under way holds its claim this long at most.
STANDINGS_CLAIM_SECONDS = 120


def spec_of(t: Tournament) -> EventSpec:
    return EventSpec(
        game=t.game,
        format=t.format,
        field_size=t.entries.count(),
        table_size=t.table_size,
        deals=t.deals,
        rounds=t.rounds,
        seed=t.seed,
        options=t.options,
    )


# An open event's start time: at most a year ahead (and at least
# CARDROOM_EVENT_MIN_LEAD_SECONDS, a minute: time to enter).
MAX_LEAD = timedelta(days=366)
MAX_ENTRIES_PER_USER = 20
# What an open event's page and API show before its start.
EMPTY_STANDINGS = {"standings": [], "crosstable": {"entries": [], "cells": None}, "matches_played": 0}
ENDED = (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)


def _frozen_versions(bots, game: str) -> list[BotVersion]:
    """Each bot's current (active) version, refused by name if it has none
    or plays another game."""
    ids = [b.pk for b in bots]
    if len(set(ids)) != len(ids):
        raise InvalidInput("a bot may enter an event once", "bots")
    versions: list[BotVersion] = []
    for bot in bots:
        if bot.game != game:
            raise InvalidInput(f"{bot.name} plays {bot.game}, not {game}", "bots")
        version = bot.current_version
        if version is None or version.status != BotVersion.Status.ACTIVE:
            raise InvalidInput(f"{bot.name} has no active version to enter", "bots")
        versions.append(version)
    return versions


def _refuse_withdrawn(ids: list[int]) -> None:
    """The owner's withdrawal stands (decision 81): read (and hold) the bots'
    rows in the caller's transaction, so a withdrawal committed a moment ago
    is seen, and one racing this waits for it."""
    withdrawn = list(Bot.objects.select_for_update().filter(pk__in=ids, withdrawn__isnull=False).order_by("name").values_list("name", flat=True))
    if withdrawn:
        raise InvalidInput(f"{', '.join(withdrawn)}: withdrawn by the owner, so not entered in events", "bots")


def create_tournament(
    *,
    user,
    name: str,
    game: str,
    format: str,
    bots: list[Bot] | tuple[Bot, ...] = (),
    table_size: int,
    deals: int = 1,
    rounds: int | None = None,
    seed: int | None = None,
    options: dict | None = None,
    startup_ms: int = 10_000,
    per_move_ms: int = 1_000,
    overage_ms: int = 10_000,
    total_ms: int = 300_000,
    starts=None,
    entries_per_user: int = 1,
    decided_by: str = "plain",
) -> Tournament:
    """Create an event. Without ``starts``: the field is ``bots`` (each bot's
    current active version frozen now) and its first batch is scheduled at
    once. With ``starts``: an open event, taking entries (``enter``) until
    then, ``bots`` its first entries (staff's); at ``starts`` the field is
    frozen and the schedule drawn (``start_due``). ``decided_by``: what
    orders the final table, plain points per match (the default) or the
    luck-adjusted ones (cardroom.luck)."""
    import secrets

    # The site's own account opens the standing series (ladder.services.open_series).
    if not (user and (user.is_staff or user.username == SYSTEM_USERNAME)):
        raise PermissionDenied("only staff create events")
    name = (name or "").strip()
    if not name:
        raise InvalidInput("an event needs a name", "name")
    if Tournament.objects.filter(name=name).exists():
        raise InvalidInput(f"there is already an event named {name!r}", "name")
    try:
        options = get_game_class(game).normalize_options(options or {})
    except EngineError as exc:
        raise InvalidInput(str(exc), "options" if "option" in str(exc) else "game") from None
    for field, value, low, high in (
        ("startup_ms", startup_ms, 100, 600_000),
        ("per_move_ms", per_move_ms, 10, 600_000),
        ("overage_ms", overage_ms, 0, 3_600_000),
        ("total_ms", total_ms, 100, 3_600_000),
        ("entries_per_user", entries_per_user, 1, MAX_ENTRIES_PER_USER),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InvalidInput(f"{field} must be a whole number from {low} to {high}, not {value!r}", field)
    if decided_by not in DECIDERS:
        raise InvalidInput(f"decided_by must be one of {', '.join(DECIDERS)}, not {decided_by!r}", "decided_by")
    if starts is not None:
        now = timezone.now()
        if timezone.is_naive(starts):
            raise InvalidInput("starts needs a time zone (an ISO time ending in Z or +HH:MM)", "starts")
        lead = int(settings.CARDROOM_EVENT_MIN_LEAD_SECONDS)
        if not now + timedelta(seconds=lead) <= starts <= now + MAX_LEAD:
            raise InvalidInput(
                f"starts must be from {lead} s to a year from now ({now.isoformat(timespec='seconds')}), not {starts.isoformat()}", "starts"
            )
    if starts is None and len(bots) < 2:
        raise InvalidInput("an event without a start time needs a field of at least 2 bots", "bots")
    versions = _frozen_versions(bots, game)
    seed = secrets.randbelow(2**62) if seed is None else seed
    try:
        # An open event's field is not known yet: its spec is checked as if
        # the field were one table (or its first entries), and again at the start.
        field = len(bots) if starts is None else max(len(bots), table_size, 2)
        spec = EventSpec(game, format, field, table_size, deals, rounds, seed, options)
    except ScheduleError as exc:
        raise InvalidInput(str(exc), "format") from None
    with transaction.atomic():
        _refuse_withdrawn([b.pk for b in bots])
        t = Tournament.objects.create(
            name=name,
            game=game,
            format=format,
            table_size=table_size,
            deals=deals,
            rounds=rounds,
            seed=seed,
            options=options,
            startup_ms=startup_ms,
            per_move_ms=per_move_ms,
            overage_ms=overage_ms,
            total_ms=total_ms,
            starts=starts,
            entries_per_user=entries_per_user,
            decided_by=decided_by,
            status=Tournament.Status.RUNNING if starts is None else Tournament.Status.OPEN,
            pairing="" if starts else schedule.pairing(spec),
            num_rounds=0 if starts else schedule.num_rounds(spec),
            total_matches=0 if starts else schedule.total_matches(spec),
            started=None if starts else timezone.now(),
            created_by=user,
        )
        TournamentEntry.objects.bulk_create(
            TournamentEntry(tournament=t, index=i, bot=bot, version=v) for i, (bot, v) in enumerate(zip(bots, versions))
        )
        if starts is None:
            _draw(t, spec)
        else:
            TournamentStandings.objects.create(tournament=t, document=EMPTY_STANDINGS, computed=None)
            _store_pages(t.pk, EMPTY_STANDINGS, 0, None)
        caching.bump(caching.MATCHES)
    log.info("event created", extra={"tournament": t.pk, "matches": t.total_matches, "format": format, "starts": starts and starts.isoformat()})
    return t


def _draw(t: Tournament, spec: EventSpec) -> None:
    """Schedule the event's first batch and store its (empty) standings, in
    the caller's transaction; its matches are sent once that commits."""
    _schedule_batch(t, spec, 0, [])
    stored, _ = TournamentStandings.objects.update_or_create(tournament=t, defaults={"document": standings_document(t), "computed": timezone.now()})
    _store_pages(t.pk, stored.document, stored.results, stored.computed)
    transaction.on_commit(lambda: feed(t.pk))


# -- open events: entries, and the start -------------------------------------------


def _taking_entries(t: Tournament, now) -> None:
    if t.status == Tournament.Status.OPEN and t.starts is not None and now < t.starts:
        return
    if t.starts is not None and now >= t.starts:  # (the same words whether or not the start has been drawn yet)
        raise Conflict(f"entries to {t.name} closed at its start, {t.starts.isoformat(timespec='seconds')}", "tournament")
    raise Conflict(f"{t.name} takes no entries: it is {t.status}, its field fixed", "tournament")


def enter(t: Tournament, user, bot: Bot) -> tuple[TournamentEntry, bool]:
    """Enter the user's bot in an open event with its current active version
    frozen; a bot already entered has its version frozen afresh (the
    swap). True when the entry is new. Refused (409) once the window closed."""
    if not (user and user.is_authenticated) or bot.owner_id != user.pk:
        raise Forbidden(f"only {bot.name}'s owner enters it in events", "bot")
    with transaction.atomic():
        # The event's row is the window's lock: the start takes it too, so an
        # entry is either in the field it draws or refused.
        t = Tournament.objects.select_for_update().get(pk=t.pk)
        _taking_entries(t, timezone.now())
        bot = Bot.objects.select_for_update(of=("self",)).select_related("current_version").get(pk=bot.pk)
        if bot.withdrawn is not None:
            raise Conflict(f"{bot.name} is withdrawn: restore it to enter it in events", "bot")
        if bot.game != t.game:
            raise InvalidInput(f"{bot.name} plays {bot.game}; {t.name} is {t.game}", "bot")
        version = bot.current_version
        if version is None or version.status != BotVersion.Status.ACTIVE:
            raise InvalidInput(f"{bot.name} has no active version to enter (upload one, and wait for its validation)", "bot")
        entry = TournamentEntry.objects.filter(tournament=t, bot=bot).first()
        if entry is not None:
            entry.version = version
            entry.save(update_fields=["version"])
            created = False
        else:
            mine = TournamentEntry.objects.filter(tournament=t, bot__owner_id=user.pk).count()
            if mine >= t.entries_per_user:
                raise Conflict(
                    f"{t.name} takes {t.entries_per_user} entr{'y' if t.entries_per_user == 1 else 'ies'} a user, "
                    f"and your bots hold {mine}: withdraw one first", "bot",
                )  # fmt: skip
            total = TournamentEntry.objects.filter(tournament=t).count()
            if total >= schedule.MAX_FIELD:
                raise Conflict(f"{t.name} is full ({schedule.MAX_FIELD} entries)", "bot")
            last = TournamentEntry.objects.filter(tournament=t).aggregate(m=models.Max("index"))["m"]
            entry = TournamentEntry.objects.create(tournament=t, index=0 if last is None else last + 1, bot=bot, version=version)
            created = True
        caching.bump(caching.MATCHES)
    log.info("event entry", extra={"tournament": t.pk, "bot": bot.pk, "version": version.pk, "new": created})
    return entry, created


def withdraw(t: Tournament, user, bot: Bot) -> None:
    """Take the bot's entry out of an open event (its owner, or staff)."""
    if not (user and user.is_authenticated) or (bot.owner_id != user.pk and not user.is_staff):
        raise Forbidden(f"only {bot.name}'s owner withdraws its entry", "bot")
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=t.pk)
        _taking_entries(t, timezone.now())
        deleted, _ = TournamentEntry.objects.filter(tournament=t, bot=bot).delete()
        if not deleted:
            raise NotFound(f"{bot.name} is not entered in {t.name}", "bot")
        caching.bump(caching.MATCHES)
    log.info("event entry withdrawn", extra={"tournament": t.pk, "bot": bot.pk})


def start_event(tournament_id: int, now=None) -> bool:
    """Freeze an open event's field and draw its schedule, once its start
    time has come: in one transaction under the event's row lock, so a start
    happens exactly once however many sweeps (or a worker killed halfway)
    try it. Too few entries, or a schedule beyond the limits: the event is
    cancelled, saying why. True when this call started (or cancelled) it."""
    now = now or timezone.now()
    with transaction.atomic():
        t = Tournament.objects.select_for_update().filter(pk=tournament_id, status=Tournament.Status.OPEN, starts__lte=now).first()
        if t is None:
            return False
        entries = list(t.entries.select_related("bot").order_by("entered", "pk"))
        # A bot withdrawn by its owner since it was entered does not play (decision 81).
        gone = [e for e in entries if e.bot.withdrawn is not None]
        if gone:
            TournamentEntry.objects.filter(pk__in=[e.pk for e in gone]).delete()
            entries = [e for e in entries if e.bot.withdrawn is None]
        # The field in entry order, 0..N-1 (shifted out of the way first: the index is unique).
        TournamentEntry.objects.filter(tournament=t).update(index=models.F("index") + schedule.MAX_FIELD * 10)
        for i, e in enumerate(entries):
            e.index = i
        TournamentEntry.objects.bulk_update(entries, ["index"])
        try:
            spec = EventSpec(t.game, t.format, len(entries), t.table_size, t.deals, t.rounds, t.seed, t.options)
        except ScheduleError as exc:
            t.status = Tournament.Status.CANCELLED
            t.finished = now
            t.cancelled_reason = f"not started: {exc}"
            t.save(update_fields=["status", "finished", "cancelled_reason"])
            log.info("event cancelled at its start", extra={"tournament": t.pk, "reason": str(exc)})
        else:
            t.status = Tournament.Status.RUNNING
            t.started = now
            t.pairing = schedule.pairing(spec)
            t.num_rounds = schedule.num_rounds(spec)
            t.total_matches = schedule.total_matches(spec)
            t.save(update_fields=["status", "started", "pairing", "num_rounds", "total_matches"])
            _draw(t, spec)
            log.info("event started", extra={"tournament": t.pk, "entries": len(entries), "matches": t.total_matches})
        caching.bump(caching.MATCHES)
    return True


def start_due(now=None) -> list[int]:
    """The periodic sweep: every open event whose start time has come starts."""
    now = now or timezone.now()
    due = Tournament.objects.filter(status=Tournament.Status.OPEN, starts__lte=now).order_by("starts").values_list("pk", flat=True)
    return [pk for pk in due if start_event(pk, now)]


def _schedule_batch(t: Tournament, spec: EventSpec, batch: int, outcomes: list[Outcome]) -> int:
    first = TournamentMatch.objects.filter(tournament=t).count()
    plans = event.batch_plans(spec, batch, outcomes, first_number=first)
    entries = list(t.entries.order_by("index"))
    for start in range(0, len(plans), CHUNK):
        chunk = plans[start : start + CHUNK]
        matches = Match.objects.bulk_create(
            Match(kind=Match.Kind.TOURNAMENT, game=t.game, options=t.options, num_players=spec.table_size, seed=p.seed)
            for p in chunk
        )
        Participant.objects.bulk_create(
            Participant(match=m, seat=seat, bot_id=entries[e].bot_id, version_id=entries[e].version_id)
            for m, p in zip(matches, chunk)
            for seat, e in enumerate(p.seats)
        )
        TournamentMatch.objects.bulk_create(
            TournamentMatch(
                tournament=t, match=m, number=p.number, round=p.round, table=p.table, deal=p.deal,
                rotation=p.rotation, seats=list(p.seats), keyed_chance=p.keyed_chance,
            )  # fmt: skip
            for m, p in zip(matches, chunk)
        )
    Tournament.objects.filter(pk=t.pk).update(batches_scheduled=batch + 1)
    t.batches_scheduled = batch + 1
    return len(plans)


def outcomes(t: Tournament) -> list[Outcome]:
    """The finished matches of the event, as the standings read them."""
    rows = (
        TournamentMatch.objects.filter(tournament=t, match__status=Match.Status.FINISHED)
        .order_by("number")
        .values_list("match_id", "number", "round", "table", "deal", "seats", "luck")
    )
    rows = list(rows)
    by_match: dict[int, list[tuple[int, int, int, str]]] = {}
    for start in range(0, len(rows), CHUNK):
        ids = [r[0] for r in rows[start : start + CHUNK]]
        for match_id, seat, rank, score, forfeit in Participant.objects.filter(match_id__in=ids).values_list(
            "match_id", "seat", "rank", "score", "forfeit_reason"
        ):
            by_match.setdefault(match_id, []).append((seat, rank, score, forfeit))
    out = []
    for match_id, number, rnd, table, deal, seats, luck in rows:
        parts = sorted(by_match.get(match_id, []))
        out.append(
            Outcome(
                number=number,
                seats=tuple(seats),
                ranks=tuple(p[1] for p in parts),
                scores=tuple(p[2] for p in parts),
                deal=deal,
                round=rnd,
                table=table,
                forfeits=tuple(p[0] for p in parts if p[3]),
                adjusted=None if luck is None else tuple(luck["adjusted"]),
                value_function=None if luck is None else luck["value_function"],
            )
        )
    return out


def record_luck(match: Match, replay: dict) -> None:
    """Store the match's luck, from its replay (cardroom.luck), for the
    standings' adjusted columns; in the transaction that records the result,
    before the event's row is locked. A replay the estimator cannot read
    leaves the match's luck unknown (its plain points stand in), logged:
    it never loses or delays the result beyond the computation itself."""
    try:
        report = luck_of(replay)
    except Exception:
        log.exception("luck not computed", extra={"match_id": match.pk})
        return
    luck = {
        "value_function": report.value_function,
        "luck": [s.luck for s in report.seats],
        "adjusted": [s.adjusted for s in report.seats],
    }
    TournamentMatch.objects.filter(match=match).update(luck=luck)


def on_match_done(match: Match) -> None:
    """Called in the transaction that finishes (or finally fails) a
    tournament match: schedules the next Swiss round once a round is
    complete, finishes the event after its last match, and sends more."""
    slot = TournamentMatch.objects.filter(match=match).values("tournament_id").first()
    if slot is None:
        return
    t = Tournament.objects.select_for_update().get(pk=slot["tournament_id"])
    Tournament.objects.filter(pk=t.pk).update(results_recorded=models.F("results_recorded") + 1)
    open_left = Match.objects.filter(tournament_slot__tournament=t).exclude(status__in=DONE).exists()
    if not open_left and t.status in (Tournament.Status.RUNNING, Tournament.Status.PAUSED):
        spec = spec_of(t)
        if t.batches_scheduled < event.batch_count(spec):
            _schedule_batch(t, spec, t.batches_scheduled, outcomes(t))
        else:
            t.status = Tournament.Status.FINISHED
            t.finished = timezone.now()
            t.save(update_fields=["status", "finished"])
            log.info("event finished", extra={"tournament": t.pk})
    transaction.on_commit(lambda: feed(t.pk))
    if t.status == Tournament.Status.FINISHED:
        refresh_standings(t.pk, force=True)  # the final table, with the last result, in its transaction
    else:
        # robust: the result is committed whatever becomes of its standings (the sweep retries)
        transaction.on_commit(lambda: refresh_standings(t.pk), robust=True)


def standings_document(t: Tournament) -> dict:
    """The standings of the event's finished matches (cardroom.tournament),
    each row with its bot's id: what the API serves."""
    entries = list(t.entries.select_related("bot", "version").order_by("index"))
    names = [f"{e.bot.name} v{e.version.number}" for e in entries]
    doc = event.standings_of(spec_of(t), names, outcomes(t), decided_by=t.decided_by)
    for row in doc["standings"]:
        row["bot"] = entries[row["entry"]].bot_id
    return doc


def refresh_standings(tournament_id: int, force: bool = False) -> bool:
    """Compute and store the event's standings if results came in since the
    stored ones, and (unless ``force``) no other refresh is under way and
    the last one is more than its spacing ago. True when it stored them."""
    now = timezone.now()
    row = TournamentStandings.objects.filter(pk=tournament_id).values("results", "not_before").first()
    event_row = Tournament.objects.filter(pk=tournament_id).values("results_recorded", "status").first()
    if row is None or event_row is None or row["results"] >= event_row["results_recorded"]:
        return False
    if not force and event_row["status"] in ENDED:
        # Final: stored (forced) when the event ended; a match still running
        # at a cancel is recorded, but the table stays as it ended.
        return False
    if not force:
        if row["not_before"] is not None and row["not_before"] > now:
            return False
        # The claim: one refresh at a time (it lapses if this process dies).
        claimed = TournamentStandings.objects.filter(pk=tournament_id, not_before=row["not_before"]).update(
            not_before=now + timedelta(seconds=STANDINGS_CLAIM_SECONDS)
        )
        if not claimed:
            return False
    t = Tournament.objects.get(pk=tournament_id)
    started = time.monotonic()
    doc = standings_document(t)  # counts at least t.results_recorded results (read first)
    spent = time.monotonic() - started
    spacing = max(float(settings.CARDROOM_STANDINGS_REFRESH_SECONDS), 10 * spent)
    computed = timezone.now()
    with transaction.atomic():  # the document and its rendered pages together
        stored = TournamentStandings.objects.filter(pk=tournament_id, results__lt=t.results_recorded).update(
            document=doc, results=t.results_recorded, computed=computed, compute_ms=round(spent * 1000),
            not_before=computed + timedelta(seconds=spacing),
        )  # fmt: skip
        if stored:
            _store_pages(tournament_id, doc, t.results_recorded, computed)
    if stored:
        caching.bump(caching.MATCHES)  # (an UPDATE: no post_save) the cached event pages
        log.info("event standings stored", extra={"tournament": tournament_id, "results": t.results_recorded, "ms": round(spent * 1000)})
    return bool(stored)


def _store_pages(tournament_id: int, doc: dict, results: int, computed) -> None:
    """The API's answer, page by page, rendered once here rather than on
    every request that misses the caches."""
    bodies = selectors.standings_pages({**doc, "results_counted": results, "computed": computed})
    TournamentStandingsPage.objects.filter(standings_id=tournament_id).delete()
    TournamentStandingsPage.objects.bulk_create(
        TournamentStandingsPage(standings_id=tournament_id, number=n, body=body) for n, body in enumerate(bodies, 1)
    )


def refresh_stale_standings() -> list[int]:
    """The periodic sweep: every event whose stored standings are behind its
    results (the last refresh spaced the next out, or died with its worker)
    is refreshed, once its spacing (or a lost refresh's claim) is over."""
    behind = (
        Tournament.objects.filter(stored_standings__results__lt=models.F("results_recorded"))
        .exclude(status__in=ENDED)
        .values_list("pk", flat=True)
    )
    return [pk for pk in behind if refresh_standings(pk)]


def may_play(match_id: int) -> bool:
    """A tournament match is claimed only while its event runs (paused or
    cancelled: the message is dropped, and resume sends it again)."""
    return Tournament.objects.filter(schedule__match_id=match_id, status=Tournament.Status.RUNNING).exists()


def feed(tournament_id: int) -> list[int]:
    """Send the event's next matches, keeping CARDROOM_TOURNAMENT_IN_FLIGHT
    sent and unfinished; re-send those whose message is stale and no longer
    waits in the broker (enqueue.without_message)."""
    if not Tournament.objects.filter(pk=tournament_id, status=Tournament.Status.RUNNING).exists():
        return []
    window = int(settings.CARDROOM_TOURNAMENT_IN_FLIGHT)
    stale = timezone.now() - timedelta(seconds=int(settings.CARDROOM_RESEND_STALE_SECONDS))
    mine = Match.objects.filter(tournament_slot__tournament_id=tournament_id)
    running = mine.filter(status=Match.Status.RUNNING).count()
    sent = list(
        mine.filter(status=Match.Status.QUEUED, enqueued__isnull=False).order_by("tournament_slot__number").values_list("pk", "enqueued")
    )
    resend = enqueue.without_message([pk for pk, when in sent if when < stale], key=lambda pk: (enqueue.PLAY_MATCH, pk))
    room = max(0, window - running - len(sent))
    fresh = list(
        mine.filter(status=Match.Status.QUEUED, enqueued__isnull=True)
        .order_by("tournament_slot__number")
        .values_list("pk", flat=True)[:room]
    )
    for pk in resend + fresh:
        enqueue.stamp_enqueued(pk)
        enqueue.play_tournament_match(pk)
    return resend + fresh


def feed_all() -> dict[int, int]:
    """The periodic sweep: every running event is fed."""
    return {pk: len(feed(pk)) for pk in Tournament.objects.filter(status=Tournament.Status.RUNNING).values_list("pk", flat=True)}


def _staff(user) -> None:
    if not (user and user.is_staff):
        raise PermissionDenied("only staff pause, resume or cancel events")


def _switch(t: Tournament, user, want: str, to: str, verb: str) -> Tournament:
    _staff(user)
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=t.pk)
        if t.status != want:
            raise Conflict(f"only a {want} event can be {verb} (this one is {t.status})", "status")
        t.status = to
        t.save(update_fields=["status"])
        if to == Tournament.Status.RUNNING:
            # messages dropped while paused: send them again
            Match.objects.filter(tournament_slot__tournament=t, status=Match.Status.QUEUED).update(enqueued=None)
            transaction.on_commit(lambda: feed(t.pk))
        caching.bump(caching.MATCHES)  # the event's cached pages show its status
    return t


def pause(t: Tournament, user) -> Tournament:
    return _switch(t, user, Tournament.Status.RUNNING, Tournament.Status.PAUSED, "paused")


def resume(t: Tournament, user) -> Tournament:
    return _switch(t, user, Tournament.Status.PAUSED, Tournament.Status.RUNNING, "resumed")


def cancel(t: Tournament, user) -> Tournament:
    """No more matches are played; what was played stays (a match running
    now finishes and is recorded)."""
    _staff(user)
    with transaction.atomic():
        t = Tournament.objects.select_for_update().get(pk=t.pk)
        if t.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            raise Conflict(f"the event is already {t.status}", "status")
        t.status = Tournament.Status.CANCELLED
        t.finished = timezone.now()
        t.save(update_fields=["status", "finished"])
        Match.objects.filter(tournament_slot__tournament=t, status=Match.Status.QUEUED).update(status=Match.Status.CANCELLED)
        refresh_standings(t.pk, force=True)  # its final table
        caching.bump(caching.MATCHES)  # (an UPDATE: no post_save)
    return t
