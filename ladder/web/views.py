"""The server-rendered pages: thin views over ladder.selectors.pages (reads)
and ladder.services (writes)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import get_conditional_response
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods

from engine import game_ids, get_game_class
from engine.replay import ReplayError
from ladder import caching, limits
from ladder import selectors as core_selectors
from ladder.converters import MAX_ID
from ladder.models import Bot, BotVersion, Ladder, Match, Participant
from ladder.selectors import adjusted as adjusted_selectors
from ladder.selectors import pages as page_selectors
from ladder.selectors import play as play_selectors
from ladder.selectors.duplicate_sets import deal_published
from ladder.services.accounts import api_token, create_account, rotate_token
from ladder.services.bots import create_bot, upload_version
from ladder.services.errors import ServiceError
from ladder.uploads import too_large_upload
from ladder.web import author_views, charts, docs, frames
from ladder.web.forms import BotForm, SignupForm, UploadForm

# what the rules pages and the play form say of each game beside the
# engine's name and player counts
SUMMARIES = {
    "allegory": (
        "Bid Lore chips for Theme cards from the Inspiration Pool. Every card belongs to one of three Tales "
        "(Nature, Energy, Spirit); at the end only your weakest Tale counts, plus 2 points for each set of three "
        "cards of one theme and 1 point for each Tale holding your secret Moral theme. The round's winner takes a "
        "card and spreads their bid over the Pool; players who Rest in a later round may grab the most-loaded card."
    ),
    "allegra": (
        "Golf with shared columns: each player has a 3×4 grid of face-down cards, and a neighbour's last column "
        "is part of your area too. Take the top discard or draw from the deck — others may knock to be given the "
        "drawn card — and swap cards in to get your area's total low. Three equal face-up cards in a line leave "
        "the table. Whoever turns their whole area up ends the round, and is doubled if not the lowest. "
        "Three rounds; the lowest total wins."
    ),
}
GAMES = {
    game.id: {"name": game.name, "players": f"{game.min_players}–{game.max_players} players", "summary": SUMMARIES[game.id]}
    for game in map(get_game_class, game_ids())
}


def _int(value, default: int | None = None) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# ---------------------------------------------------------------------------
# Home and rules
# ---------------------------------------------------------------------------


def home(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "cardroom/home.html",
        {
            "games": [{"id": k, **v} for k, v in GAMES.items()],
            "ladders": page_selectors.active_ladders_with_top(5),
            "latest": page_selectors.latest_matches(10),
            "counts": page_selectors.live_counts(),
        },
    )


def _render_markdown(path: Path) -> tuple[str, str] | None:
    """A rules document as HTML and its table of contents (ladder.web.docs:
    raw HTML escaped, links checked, cached until the file changes)."""
    return docs.render_file(path, toc_depth="2")


def rules(request: HttpRequest, game: str) -> HttpResponse:
    if game not in GAMES:
        raise Http404("no such game")
    path = Path(settings.BASE_DIR) / "docs" / f"rules-{game}.md"
    rendered = _render_markdown(path)
    return render(
        request,
        "cardroom/rules.html",
        {
            "game": {"id": game, **GAMES[game]},
            "rules_html": rendered[0] if rendered else None,
            "toc_html": rendered[1] if rendered else None,
            "doc_path": f"docs/rules-{game}.md",
        },
    )


# ---------------------------------------------------------------------------
# Leaderboard
# ---------------------------------------------------------------------------

REFRESH_SECONDS = 30  # the leaderboard re-fetches its table this often

SORT_LABELS = [
    ("rank", "#"),
    ("bot", "Bot"),
    ("owner", "Owner"),
    ("elo", "Elo"),
    ("ordinal", "OpenSkill"),
    ("games", "Games"),
    ("winrate", "Win rate"),
    ("forfeits", "Forfeits"),
]


def ladder_detail(request: HttpRequest, pk: int) -> HttpResponse:
    ladder = get_object_or_404(Ladder, pk=pk)
    sort = request.GET.get("sort", "rank")
    descending = request.GET.get("dir", "desc") != "asc"
    page = page_selectors.standings_page(ladder, sort, _int(request.GET.get("page"), 1) or 1, descending)
    bot_url = reverse("web-bot", args=[0])[: -len("0/")]
    ranking = adjusted_selectors.ranking(ladder.pk)
    adjusted = adjusted_selectors.for_bots(ladder.pk, [r.bot_id for r in page.rows], ranking and ranking["settle_matches"])
    for r in page.rows:
        r.adjusted = adjusted.get(r.bot_id)
        r.html = _standing_row(r, bot_url)
    columns = []
    for key, label in SORT_LABELS:
        active = key == page.sort
        # a click on the active column flips its direction; others start at their natural order
        next_dir = ("asc" if descending else "desc") if active else "desc"
        columns.append(
            {
                "key": key, "label": label, "active": active, "dir": next_dir, "descending": descending,
                "num": key in ("rank", "elo", "ordinal", "games", "winrate", "forfeits"),
            }
        )  # fmt: skip
    context = {
        "ladder": ladder,
        "page": page,
        "columns": columns,
        "sort_query": f"sort={page.sort}&dir={'desc' if page.descending else 'asc'}",
        "page_range": _page_range(page.page, page.pages),
        "refresh_seconds": REFRESH_SECONDS,
        "adjusted_ranking": ranking,
    }
    if request.GET.get("partial") == "1":
        return render(request, "cardroom/_standings.html", context)
    context["latest"] = page_selectors.latest_matches(8, ladder=ladder)
    context["total_seconds"] = round(ladder.total_ms / 1000)
    return render(request, "cardroom/ladder.html", context)


def _standing_row(r, bot_url: str) -> SafeString:
    """One leaderboard row, made in Python: the leaderboard must render fast
    with thousands of bots, and a template tag per cell costs more than all
    of the page's queries. Text from users (names) is escaped here."""
    name = escape(r.bot.name)
    if r.trend_delta is None:
        delta = ""
    else:
        cls = "up" if r.trend_delta > 0 else "down" if r.trend_delta < 0 else ""
        delta = f' <small class="delta {cls}">{"+" if r.trend_delta > 0 else ""}{r.trend_delta:.0f}</small>'
    tags = ""
    if r.provisional:
        tags += ' <span class="tag prov" title="provisional: fewer than 10 games with its current version">prov.</span>'
    if r.bot.builtin:
        tags += ' <span class="tag" title="one of cardroom&#x27;s own bots">built-in</span>'
    win = f"{100.0 * r.wins / r.games:.0f}%" if r.games else "–"
    return mark_safe(
        f'<tr data-bot="{name}" data-elo="{r.elo}">'
        f'<td class="num rank">{r.position}</td>'
        f'<td class="sticky"><a href="{bot_url}{r.bot_id}/" class="bot-name">{name}</a>{tags}</td>'
        f"<td>{escape(r.bot.owner.username)}</td>"
        f'<td class="num strong">{r.elo:.0f}</td>'
        f'<td class="num" title="μ {r.mu:.2f}, σ {r.sigma:.2f}">{r.ordinal:.1f} <small class="muted">±{r.sigma:.1f}</small></td>'
        f'<td class="num">{r.games}</td>'
        f'<td class="num">{win}</td>'
        f'<td class="num{" warn" if r.forfeits else ""}">{r.forfeits}</td>'
        f'<td class="num adjusted">{_adjusted_cell(r.adjusted)}</td>'
        f'<td class="trend">{charts.sparkline(r.trend)}{delta}</td></tr>'
    )


def settled_text(adjusted: dict | None) -> str:
    """Whether a version's adjusted place is settled, in words (the
    leaderboard's and the bot page's)."""
    if adjusted is None:
        return ""
    if adjusted["settled"]:
        return "settled"
    more = adjusted["more_matches"]
    if more is None:
        return "not settled"
    return f"not settled: about {more} more match{'es' if more != 1 else ''}"


def _adjusted_cell(adjusted: dict | None) -> str:
    if adjusted is None:
        return "–"
    tag = settled_text(adjusted)
    cls = "settled" if adjusted["settled"] else "unsettled"
    if adjusted["rating"] is None:
        return f'– <small class="tag {cls}" data-settled="false">{tag}</small>'
    interval = f'{adjusted["low"]:.0f}–{adjusted["high"]:.0f}'
    return (
        f'<span title="95% interval {interval}, place {adjusted["place"]}">{adjusted["rating"]:.0f}</span>'
        f' <small class="tag {cls}" data-settled="{"true" if adjusted["settled"] else "false"}">{tag}</small>'
    )


def _page_range(page: int, pages: int) -> list[int | None]:
    """1 … 4 5 [6] 7 8 … 40 (None is a gap)."""
    wanted = {1, pages, page - 2, page - 1, page, page + 1, page + 2}
    out: list[int | None] = []
    for p in sorted(x for x in wanted if 1 <= x <= pages):
        if out and out[-1] is not None and p - out[-1] > 1:
            out.append(None)
        out.append(p)
    return out


# ---------------------------------------------------------------------------
# Bot page
# ---------------------------------------------------------------------------


def bot_detail(request: HttpRequest, pk: int) -> HttpResponse:
    bot = page_selectors.bot_detail(pk)
    if bot is None:
        raise Http404("no such bot")
    is_owner = request.user.is_authenticated and request.user.pk == bot.owner_id
    ratings = page_selectors.bot_ratings(bot)
    current = bot.current_version
    adjusted = adjusted_selectors.for_version(current) if current and current.status == BotVersion.Status.ACTIVE else {}
    for r in ratings:
        r.adjusted = adjusted.get(r.ladder_id)
        r.settled_text = settled_text(r.adjusted)
    chosen = None
    wanted = _int(request.GET.get("ladder"))
    for r in ratings:
        if r.ladder_id == wanted:
            chosen = r
    if chosen is None and ratings:
        chosen = max(ratings, key=lambda r: (r.games, -r.ladder_id))
    chart = None
    history = None
    if chosen is not None:
        history = page_selectors.rating_history(chosen)
        chart = charts.rating_chart(history, bot.name, chosen.ladder.name)
    return render(
        request,
        "cardroom/bot.html",
        {
            "bot": bot,
            "is_owner": is_owner,
            "ratings": ratings,
            "chosen": chosen,
            "chart": chart,
            "history": history,
            "versions": page_selectors.bot_versions(bot),
            "recent": page_selectors.recent_matches(bot),
            "h2h": page_selectors.head_to_head(bot),
            "events": page_selectors.bot_events(bot),
            "game": GAMES.get(bot.game),
        },
    )


# ---------------------------------------------------------------------------
# Matches
# ---------------------------------------------------------------------------


class BadQuery(Exception):
    """A query parameter that is not what the page takes: a 400 page saying so."""


def _id_param(request: HttpRequest, name: str) -> int | None:
    """An id from the query string (none when absent or empty); a number
    past the 64-bit ids would overflow the database's integers."""
    raw = request.GET.get(name, "")
    if raw == "":
        return None
    if not re.fullmatch(r"[0-9]{1,19}", raw) or not 1 <= int(raw) <= MAX_ID:
        raise BadQuery(f"{name} takes an id, a whole number from 1 to {MAX_ID}, not {raw[:40]!r}.")
    return int(raw)


def bad_query(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "cardroom/bad_request.html", {"message": message}, status=400)


def matches(request: HttpRequest) -> HttpResponse:
    try:
        before, ladder_id, bot_id = (_id_param(request, name) for name in ("before", "ladder", "bot"))
    except BadQuery as exc:
        return bad_query(request, str(exc))
    rows = page_selectors.matches_page(before=before, ladder=ladder_id, bot=bot_id, limit=30)
    ladder = Ladder.objects.filter(pk=ladder_id).first() if ladder_id else None
    bot = Bot.objects.filter(pk=bot_id).first() if bot_id else None
    return render(
        request,
        "cardroom/matches.html",
        {
            "matches": rows, "ladder": ladder, "bot": bot, "ladders": Ladder.objects.all(),
            "next_before": rows[-1].pk if len(rows) == 30 else None,
        },
    )  # fmt: skip


def match_detail(request: HttpRequest, pk: int) -> HttpResponse:
    match = page_selectors.match_detail(pk)
    if match is None:
        raise Http404("no such match")
    seats = list(match.participants.all())
    user_id = request.user.pk if request.user.is_authenticated else None
    for p in seats:
        p.mine = user_id is not None and p.bot.owner_id == user_id
        p.elo_delta = (p.elo_after - p.elo_before) if p.elo_after is not None and p.elo_before is not None else None
        p.mu_delta = (p.mu_after - p.mu_before) if p.mu_after is not None and p.mu_before is not None else None
        p.ordinal_before = (p.mu_before - 3 * p.sigma_before) if p.mu_before is not None else None
        p.ordinal_after = (p.mu_after - 3 * p.sigma_after) if p.mu_after is not None else None
    luck = page_selectors.match_luck(match, seats)
    # a rotation of a duplicate set: its deal (seed, replay) once the whole set is over
    published = deal_published(match)
    has_replay = bool(match.replay) and published
    person = play_selectors.person_seat(match)
    rows = [*seats, person] if person is not None else seats
    views = [(f"seat-{p.seat}", f"Seat {p.seat} · {p.bot.name}") for p in seats]
    if person is not None:
        views.append((f"seat-{person.seat}", f"Seat {person.seat} · {person.user.username} (a person)"))
    return render(
        request,
        "cardroom/match.html",
        {
            "match": match,
            "seats": seats,
            "by_rank": sorted(rows, key=lambda p: (p.rank if p.rank is not None else 99, p.seat)),
            "has_replay": has_replay,
            "deal_published": published,
            "any_mine": any(p.mine for p in seats),
            "game": GAMES.get(match.game),
            "views": [("full", "Full view (every card)")] + sorted(views, key=lambda v: int(v[0][5:])),
            "person": person,
            "mine_to_play": person is not None and person.user_id == user_id,
            "luck": luck,
        },
    )


def match_frames(request: HttpRequest, pk: int) -> HttpResponse:
    """The viewer's frames for one view of a finished match (JSON, gzip)."""
    match = Match.objects.filter(pk=pk).first()
    if match is None:
        raise Http404("no such match")
    view = request.GET.get("view", "full")
    try:
        seat = frames.parse_view(view, match.num_players)
    except frames.ViewError as exc:
        return JsonResponse({"detail": str(exc), "field": "view"}, status=400)
    if not match.replay:
        return JsonResponse({"detail": f"match {pk} has no replay yet (status: {match.status})"}, status=404)
    if not deal_published(match):
        return JsonResponse(
            {
                "detail": f"match {pk} is a rotation of a duplicate set still being played: its replay comes once the set is over"
            },
            status=404,
        )
    view = "full" if seat is None else f"seat-{seat}"
    key = f"web:frames:{frames.FRAMES_VERSION}:{match.pk}:{view}"
    person = play_selectors.person_seat(match)
    if person is not None:
        # A casual match's frames name its person, by the name they have now
        # (a tombstone once the account is deleted, decision 191): a new name, a new entry.
        key += ":" + hashlib.blake2b(person.user.username.encode(), digest_size=8).hexdigest()
    body = cache.get(key)
    if body is None:
        try:
            raw = core_selectors.replay_bytes(match)
        except OSError:
            return JsonResponse({"detail": f"the replay file of match {pk} is missing from storage"}, status=404)
        doc = json.loads(raw)
        players = [
            {
                "seat": p.seat,
                "name": f"{p.bot.name} v{p.version.number}",
                "bot": p.bot.name,
                "bot_url": reverse("web-bot", args=[p.bot_id]),
                "version": p.version.number,
            }
            for p in match.participants.select_related("bot", "version").order_by("seat")
        ]
        if person is not None:  # a casual match: the person's seat has no bot
            players.append({"seat": person.seat, "name": person.user.username, "bot": None, "bot_url": None, "version": None})
            players.sort(key=lambda p: p["seat"])
        try:
            body = frames.frames_json_gz(doc, view, players)
        except ReplayError as exc:
            return JsonResponse({"detail": f"the replay does not re-play: {exc}"}, status=500)
        cache.set(key, body, 24 * 3600)
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        response = HttpResponse(body, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(body), content_type="application/json")
    response["Vary"] = "Accept-Encoding"
    if person is None:
        response["Cache-Control"] = "public, max-age=3600"
        return response
    # The person's name may change (to a tombstone): asked again each time, a 304 while it has not.
    etag = f'"{hashlib.blake2b(key.encode(), digest_size=16).hexdigest()}{"-gz" if response.has_header("Content-Encoding") else ""}"'
    response["ETag"] = etag
    response["Cache-Control"] = caching.NAMED_REPLAY_CACHE_CONTROL
    return get_conditional_response(request, etag=etag, response=response)


def match_log(request: HttpRequest, pk: int, seat: int) -> HttpResponse:
    """A bot's stderr in one match: for the bot's owner only."""
    if not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={request.path}")
    participant = (
        Participant.objects.select_related("bot", "version", "match", "match__ladder").filter(match_id=pk, seat=seat).first()
    )
    if participant is None:
        raise Http404("no such seat")
    if participant.bot.owner_id != request.user.pk:
        return render(request, "cardroom/forbidden.html", {"message": "Only the bot's owner may read its logs. The match and its replay are public: open the match page."}, status=403)
    text = core_selectors.log_text(participant)
    if request.GET.get("raw") == "1":
        response = HttpResponse(text, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="match-{pk}-seat-{seat}.log"'
        return response
    return render(request, "cardroom/log.html", {"p": participant, "match": participant.match, "text": text})


# ---------------------------------------------------------------------------
# Accounts
# ---------------------------------------------------------------------------


def _too_many(request: HttpRequest, template: str, context: dict, refused) -> HttpResponse:
    """A web form over its rate limit: the form again, saying so (429)."""
    response = render(request, template, {**context, "limit_error": refused.message}, status=429)
    response["Retry-After"] = str(refused.retry_after)
    return response


class LoginView(auth_views.LoginView):
    """Django's login view, with the "login" rate limit the API's token
    endpoint has (failed logins also lock out: django-axes)."""

    template_name = "cardroom/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        refused = limits.refusal(request, "login")
        if refused:
            return _too_many(request, self.template_name, self.get_context_data(form=AuthenticationForm(request)), refused)
        return super().post(request, *args, **kwargs)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("web-my-bots")
    if request.method == "POST":
        refused = limits.refusal(request, "register")
        if refused:
            return _too_many(request, "cardroom/signup.html", {"form": SignupForm()}, refused)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                user = create_account(form.cleaned_data["username"], form.cleaned_data["password1"])
                api_token(user)
        except ServiceError as exc:
            form.add_error("username", exc.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}! Create your first bot below.")
            return redirect("web-my-bots")
    return render(request, "cardroom/signup.html", {"form": form})


@login_required
def account(request: HttpRequest) -> HttpResponse:
    if request.method == "POST" and request.POST.get("action") == "regenerate":
        rotate_token(request.user)
        messages.success(request, "A new API token was created; the old one no longer works.")
        return redirect("web-account")
    token = api_token(request.user)
    return render(request, "cardroom/account.html", {"token": token, **author_views.account_context(request)})


# ---------------------------------------------------------------------------
# My bots
# ---------------------------------------------------------------------------


@login_required
def my_bots(request: HttpRequest) -> HttpResponse:
    form = BotForm(request.POST or None)
    refused = limits.refusal(request, "bot") if request.method == "POST" else None
    if refused:
        context = {"form": BotForm(), "bots": page_selectors.my_bots(request.user), "logs": page_selectors.my_recent_logs(request.user)}
        return _too_many(request, "cardroom/my_bots.html", context, refused)
    if request.method == "POST" and form.is_valid():
        try:
            bot = create_bot(
                owner=request.user,
                game=form.cleaned_data["game"],
                name=form.cleaned_data["name"],
                description=form.cleaned_data["description"],
            )
        except ServiceError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            messages.success(request, f"Bot {bot.name} created. Upload its first version.")
            return redirect("web-my-bot", pk=bot.pk)
    return render(
        request,
        "cardroom/my_bots.html",
        {"form": form, "bots": page_selectors.my_bots(request.user), "logs": page_selectors.my_recent_logs(request.user)},
    )


def _own_bot(request: HttpRequest, pk: int) -> Bot:
    bot = Bot.objects.select_related("owner", "current_version").filter(pk=pk).first()
    if bot is None or bot.owner_id != request.user.pk:
        raise Http404("no such bot among yours")
    return bot


def _versions_context(bot: Bot) -> dict:
    """The part of "manage my bot" that changes while a version is validated
    (re-fetched every few seconds until no version is pending)."""
    versions = page_selectors.bot_versions(bot)
    author_views.annotate_versions(bot, versions)
    busy = any(v.status in (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING) for v in versions)
    return {
        "bot": bot, "versions": versions, "busy": busy, "is_owner": True,
        "recent": page_selectors.recent_matches(bot, limit=15, include_validation=True),
    }  # fmt: skip


@login_required
def my_bot(request: HttpRequest, pk: int) -> HttpResponse:
    bot = _own_bot(request, pk)
    if request.GET.get("partial") == "versions":
        return render(request, "cardroom/_versions.html", _versions_context(bot))
    form = UploadForm()
    upload_error = None
    status = 200  # a form with an error is the page again (as Django's forms do), a limit a 429
    refused = limits.refusal(request, "upload") if request.method == "POST" else None
    if refused:
        upload_error, status = refused.message, 429
    elif request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        # The body went through the UploadLimit guard (FILE_UPLOAD_HANDLERS):
        # a file over the limit was dropped at the limit, never stored whole.
        too_large = too_large_upload(request)
        if too_large:
            upload_error = too_large
        elif form.is_valid():
            f = form.cleaned_data["file"]
            try:
                version = upload_version(bot=bot, filename=f.name, data=f.read(settings.CARDROOM_MAX_UPLOAD_BYTES + 1))
            except ServiceError as exc:
                upload_error = exc.message
            else:
                messages.success(
                    request, f"Uploaded {version.filename} as version {version.number}: it is queued for validation, and this page follows it."
                )
                return redirect("web-my-bot", pk=bot.pk)
        else:
            upload_error = "; ".join(e for errs in form.errors.values() for e in errs)
    context = _versions_context(bot)
    context.update(
        {
            "form": form,
            "upload_error": upload_error,
            "max_upload": settings.CARDROOM_MAX_UPLOAD_BYTES,
            **author_views.bot_management_context(bot),
        }
    )
    response = render(request, "cardroom/my_bot.html", context, status=status)
    if refused:
        response["Retry-After"] = str(refused.retry_after)
    return response
