"""The events' pages: list, event (live progress, standings, crosstable,
duplicate deal table, every match), staff's new-event form and controls.
Thin: reads from ladder.selectors, writes through ladder.services.tournaments."""

from __future__ import annotations

from datetime import UTC
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.views.decorators.http import require_POST

from ladder import caching, event_archive, selectors
from ladder.api.errors import status_of
from ladder.models import GAME_CHOICES, Bot, BotVersion
from ladder.services import open_series
from ladder.services import tournaments as services
from ladder.services.errors import ServiceError

REFRESH_SECONDS = 5
MATCHES_PER_PAGE = 200
# A big field's page shows its standings and its entries a page at a time
# (1,000 rows of each would cost a second to render: decision 200).
STANDINGS_PER_PAGE = 100
FIELD_PER_PAGE = 100


class TournamentForm(forms.Form):
    name = forms.CharField(max_length=80)
    game = forms.ChoiceField(choices=GAME_CHOICES)
    format = forms.ChoiceField(choices=[("round-robin", "round-robin"), ("swiss", "Swiss"), ("duplicate", "duplicate")])
    starts = forms.DateTimeField(
        required=False, label="Start (UTC)", widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="Given: an open event. Authors enter their own bots until this time, when the field is frozen and play starts.",
    )  # fmt: skip
    entries_per_user = forms.IntegerField(min_value=1, max_value=20, initial=1, label="Entries per user", help_text="An open event: how many bots one author may enter.")
    bots = forms.ModelMultipleChoiceField(
        queryset=Bot.objects.none(), widget=forms.CheckboxSelectMultiple, required=False,
        help_text="The field (at least two), each bot's current version frozen when the event is created; for an open event, its first entries (optional).",
    )  # fmt: skip
    table_size = forms.IntegerField(min_value=2, max_value=6, initial=2)
    deals = forms.IntegerField(min_value=1, max_value=1000, initial=1, help_text="Matches per table (duplicate: deals, each played in every seat rotation).")
    rounds = forms.IntegerField(min_value=1, max_value=1000, required=False, help_text="Swiss rounds; for round-robin, asks for a balanced schedule.")
    per_move_ms = forms.IntegerField(min_value=10, max_value=600_000, initial=1000, label="Per move (ms)")
    total_ms = forms.IntegerField(min_value=100, max_value=3_600_000, initial=300_000, label="Total per bot (ms)")
    seed = forms.IntegerField(min_value=0, max_value=2**62 - 1, required=False, help_text="Left empty: a random seed (shown on the event once its last match has ended).")
    decided_by = forms.ChoiceField(
        choices=[("plain", "plain points"), ("adjusted", "luck-adjusted points")], initial="plain", required=False, label="Decided by",
        help_text="What orders the final table first: the points as played, or with the luck of the cards taken out (both are shown).",
    )  # fmt: skip

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["bots"].queryset = (
            Bot.objects.filter(current_version__status=BotVersion.Status.ACTIVE, withdrawn__isnull=True).select_related("owner").order_by("game", "name")
        )
        self.fields["bots"].label_from_instance = lambda b: f"{b.name} ({b.game}, {b.owner.username})"


def tournament_list(request: HttpRequest) -> HttpResponse:
    events = list(selectors.tournaments_list()[:200])
    groups = {"open": [], "running": [], "finished": []}
    for t in events:
        row = {"t": t, "progress": selectors.tournament_progress(t), "entries": t.entries.count()}
        groups["open" if t.status == "open" else "running" if t.status in ("running", "paused") else "finished"].append(row)
    groups["open"].sort(key=lambda r: r["t"].starts)
    context = {"groups": groups, "any": bool(events), "series": open_series.summary()}
    return render(request, "cardroom/tournaments.html", context)


def _page_number(raw) -> int:
    """A page parameter as a number from 1 (anything else: 1; past the last: the last, as Paginator.get_page does)."""
    return int(raw) if isinstance(raw, str) and raw.isdigit() and 0 < len(raw) < 7 and int(raw) > 0 else 1


def _live_context(t, standings_page: int) -> dict:
    """The live part: progress, a page of the standings (and of the duplicate
    deal table's rows, the same entries), the crosstable of a small field."""
    doc = selectors.tournament_standings(t)
    rows = doc["standings"]
    names = {r["entry"]: r["name"] for r in rows}
    order = [r["entry"] for r in rows]
    page = Paginator(rows, STANDINGS_PER_PAGE).get_page(standings_page)
    adjusted = "decided_by" in doc
    if adjusted:
        # each row's lead over the next row: plain and adjusted differences (fields of up to 64)
        plain = {(d["a"], d["b"]): d["ci95"] for d in doc.get("differences", [])}
        luckless = {(d["a"], d["b"]): d["ci95"] for d in doc.get("adjusted_differences", [])}
        following = dict(zip(order, order[1:]))
        for r in page.object_list:
            pair = (r["entry"], following.get(r["entry"]))
            r["lead"] = (
                {"plain": plain[pair], "adjusted": luckless[pair]} if pair in plain and pair in luckless else None
            )
    cross = None
    cells = doc["crosstable"]["cells"]
    if cells is not None and len(order) <= 24:
        cross = [{"name": names[a], "cells": [cells[a][b] for b in order]} for a in order]
    deals = None
    if "deals" in doc:
        table = doc["deals"]
        shown = {r["entry"]: n for n, r in enumerate(page.object_list)}
        deals = {
            "numbers": table["deals"],
            "field": table["field_mean_rank"],
            "rows": [{"name": names[row["entry"]], "cells": row["deals"], "mean": row["mean_vs_field"]}
                     for row in sorted((r for r in table["entries"] if r["entry"] in shown), key=lambda r: shown[r["entry"]])],
        }  # fmt: skip
    return {
        "t": t,
        "progress": selectors.tournament_progress(t),
        "doc": doc,
        "standings": page,
        "cross": cross,
        "cross_names": [names[e] for e in order],
        "deals": deals,
        "adjusted": adjusted,
        "refresh_seconds": REFRESH_SECONDS,
    }


def _links(pages: dict[str, int], name: str, number: int) -> str:
    """The query of this page with ``name`` at page ``number`` (the other
    pages kept; page 1 left out; sorted, as the shared cache keys them)."""
    chosen = {**pages, name: number}
    return "?" + urlencode(sorted((k, v) for k, v in chosen.items() if v != 1))


def _public_body(t, pages: dict[str, int], partial: bool) -> dict[str, str]:
    """What every visitor sees of the event's page, rendered: its head and
    its body (the live part alone for the live refresh). No form and nothing
    of the visitor's (rendered without the request: no context processor,
    so no user, token or message can slip in): kept in the shared cache and
    put into each visitor's page (caching.cached_part)."""
    context = {"t": t, "pages": pages, "path": reverse("web-tournament", args=[t.pk]), "links": {}}
    if t.status != "open":
        context.update(_live_context(t, pages["standings"]))
        _add_links(context, "standings", context["standings"])
    if partial:
        return {"live": render_to_string("cardroom/_tournament_live.html", context) if t.status != "open" else ""}
    entries, field_size = selectors.tournament_entries_from(t, (pages["field"] - 1) * FIELD_PER_PAGE, FIELD_PER_PAGE)
    field = Paginator(range(field_size), FIELD_PER_PAGE).get_page(pages["field"])
    if field.number != pages["field"]:  # (past the last page: the last)
        entries, _ = selectors.tournament_entries_from(t, (field.number - 1) * FIELD_PER_PAGE, FIELD_PER_PAGE)
    seed_published = selectors.event_seed_published(t)  # (a match's end clears this cached part)
    context.update(entries=entries, field=field, field_size=field_size, archive=seed_published and t.total_matches > 0, seed_published=seed_published)
    _add_links(context, "field", field)
    if t.status != "open":
        page = Paginator(selectors.tournament_matches(t), MATCHES_PER_PAGE).get_page(pages["page"])
        seated = {e for m in page.object_list for e in m["tournament_slot__seats"]}
        name_of = dict(t.entries.filter(index__in=seated).values_list("index", "bot__name"))
        context.update(page=page, matches=[{**m, "names": [name_of[e] for e in m["tournament_slot__seats"]]} for m in page.object_list])
        _add_links(context, "page", page)
    return {
        "head": render_to_string("cardroom/_tournament_head.html", context),
        "body": render_to_string("cardroom/_tournament_body.html", context),
    }


def _add_links(context: dict, name: str, paged) -> None:
    """The links to the previous and next page of ``name``, if it has other pages."""
    if paged.has_other_pages():
        pages = context["pages"]
        context["links"][name] = {
            "previous": paged.has_previous() and _links(pages, name, paged.previous_page_number()),
            "next": paged.has_next() and _links(pages, name, paged.next_page_number()),
        }


def tournament_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The event's page: its public part from the shared cache (the same for
    everyone, rebuilt once results or entries change), around it what is
    the visitor's own (staff controls, their entry forms, the site's header)."""
    t = selectors.tournament(pk)
    if t is None:
        raise Http404
    pages = {name: _page_number(request.GET.get(name)) for name in ("standings", "field", "page")}
    partial = request.GET.get("partial") == "1"
    part = f"web-tournament:{t.pk}:{'live' if partial else 'page'}:{pages['standings']}:{pages['field']}:{pages['page']}"
    public = caching.cached_part(part, caching.PUBLIC_READS["web-tournament"][1], lambda: _public_body(t, pages, partial))
    if partial:
        return HttpResponse(public["live"])
    context = {"t": t, "public": public, "taking_entries": t.status == "open" and t.starts is not None and timezone.now() < t.starts}
    if context["taking_entries"] and request.user.is_authenticated:
        context.update(selectors.entry_choices(t, request.user))
    return render(request, "cardroom/tournament.html", context)


def tournament_archive(request: HttpRequest, pk: int) -> HttpResponse:
    """An ended event's standings and every replay, one zip, built once
    for each change of what it holds and stored (event_archive.stored)."""
    t = selectors.tournament(pk)
    if t is None:
        raise Http404
    # The archive holds the event seed: made once the last match has ended
    # (a cancelled event's match still running included, decision 173).
    if not selectors.event_seed_published(t) or not t.total_matches:
        message = f"{t.name} is {t.status}: its archive is made once its last match has ended, its table final."
        return render(request, "cardroom/forbidden.html", {"message": message}, status=409)
    name, digest = event_archive.stored(t)
    etag = f'"{digest}"'
    response = get_conditional_response(request, etag=etag)
    if response is None:
        response = FileResponse(default_storage.open(name, "rb"), content_type="application/zip", as_attachment=True, filename=event_archive.filename(t))
    response["ETag"] = etag
    response["Cache-Control"] = caching.PUBLIC_CACHE_CONTROL  # (anyone's: revalidated by its ETag)
    return response


@require_POST
def tournament_entry(request: HttpRequest, pk: int) -> HttpResponse:
    """The event page's entry forms: enter (or swap the version of) one of
    the user's bots, or withdraw it, while the event takes entries."""
    t = selectors.tournament(pk)
    if t is None:
        raise Http404
    if not request.user.is_authenticated:
        return redirect(f"/login/?next=/tournaments/{pk}/")
    bot = Bot.objects.filter(pk=_int(request.POST.get("bot"))).select_related("current_version").first()
    if bot is None:
        return render(request, "cardroom/bad_request.html", {"message": "Choose one of your bots."}, status=400)
    try:
        if request.POST.get("action") == "withdraw":
            services.withdraw(t, request.user, bot)
            messages.success(request, f"{bot.name} is withdrawn from {t.name}.")
        else:
            entry, created = services.enter(t, request.user, bot)
            held = f"{bot.name} v{entry.version.number}"
            messages.success(request, f"{held} is entered in {t.name}." if created else f"{t.name} now holds {held}.")
    except ServiceError as exc:
        return render(request, "cardroom/forbidden.html", {"message": exc.message}, status=status_of(exc))
    return redirect("web-tournament", pk=t.pk)


def _int(raw) -> int | None:
    return int(raw) if isinstance(raw, str) and raw.isdigit() and len(raw) < 19 else None


def tournament_new(request: HttpRequest) -> HttpResponse:
    if not request.user.is_staff:
        return render(request, "cardroom/forbidden.html", {"message": "Only staff create events."}, status=403)
    form = TournamentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            t = services.create_tournament(
                user=request.user, name=data["name"], game=data["game"], format=data["format"], bots=list(data["bots"]),
                table_size=data["table_size"], deals=data["deals"], rounds=data["rounds"], seed=data["seed"],
                per_move_ms=data["per_move_ms"], total_ms=data["total_ms"],
                # the form's time is UTC (its label says so), whatever the browser's zone
                starts=data["starts"] and data["starts"].replace(tzinfo=UTC), entries_per_user=data["entries_per_user"],
                decided_by=data["decided_by"] or "plain",
            )  # fmt: skip
        except ServiceError as exc:
            field = exc.field if exc.field in form.fields else None
            form.add_error(field, exc.message)
        else:
            return redirect("web-tournament", pk=t.pk)
    return render(request, "cardroom/tournament_new.html", {"form": form})


@require_POST
def tournament_control(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    t = selectors.tournament(pk)
    if t is None:  # (the path admits only pause, resume and cancel)
        raise Http404
    try:
        getattr(services, action)(t, request.user)
    except PermissionDenied:
        return render(request, "cardroom/forbidden.html", {"message": "Only staff pause, resume or cancel events."}, status=403)
    except ServiceError as exc:
        return render(request, "cardroom/forbidden.html", {"message": exc.message}, status=409)
    return redirect("web-tournament", pk=t.pk)
