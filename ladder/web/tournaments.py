"""The events' pages: list, event (live progress, standings, crosstable,
duplicate deal table, every match), staff's new-event form and controls.
Thin: reads from ladder.selectors, writes through ladder.services.tournaments."""

from __future__ import annotations

from datetime import UTC

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from ladder import event_archive, selectors
from ladder.models import GAME_CHOICES, Bot, BotVersion
from ladder.services import open_series
from ladder.services import tournaments as services
from ladder.services.bots import ServiceError

REFRESH_SECONDS = 5
MATCHES_PER_PAGE = 200


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
    seed = forms.IntegerField(min_value=0, max_value=2**62 - 1, required=False, help_text="Left empty: a random seed (shown on the event).")

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


def _live_context(t) -> dict:
    doc = selectors.tournament_standings(t)
    names = {r["entry"]: r["name"] for r in doc["standings"]}
    order = [r["entry"] for r in doc["standings"]]
    cross = None
    cells = doc["crosstable"]["cells"]
    if cells is not None and len(order) <= 24:
        cross = [{"name": names[a], "cells": [cells[a][b] for b in order]} for a in order]
    deals = None
    if "deals" in doc:
        table = doc["deals"]
        deals = {
            "numbers": table["deals"],
            "field": table["field_mean_rank"],
            "rows": [{"name": names[row["entry"]], "cells": row["deals"], "mean": row["mean_vs_field"]}
                     for row in sorted(table["entries"], key=lambda r: order.index(r["entry"]))],
        }  # fmt: skip
    return {
        "t": t,
        "progress": selectors.tournament_progress(t),
        "doc": doc,
        "cross": cross,
        "cross_names": [names[e] for e in order],
        "deals": deals,
        "refresh_seconds": REFRESH_SECONDS,
    }


def tournament_detail(request: HttpRequest, pk: int) -> HttpResponse:
    t = selectors.tournament(pk)
    if t is None:
        raise Http404
    context = _live_context(t)
    if request.GET.get("partial") == "1":
        return render(request, "cardroom/_tournament_live.html", context)
    page = Paginator(selectors.tournament_matches(t), MATCHES_PER_PAGE).get_page(request.GET.get("page"))
    entries = selectors.tournament_entries(t)
    by_index = {e["entry"]: e for e in entries}
    context.update(
        page=page,
        entries=entries,
        matches=[{**m, "names": [by_index[e]["name"] for e in m["tournament_slot__seats"]]} for m in page.object_list],
        taking_entries=t.status == "open" and t.starts is not None and timezone.now() < t.starts,
        archive=t.status in ("finished", "cancelled") and t.total_matches > 0,
    )
    if context["taking_entries"] and request.user.is_authenticated:
        context.update(selectors.entry_choices(t, request.user))
    return render(request, "cardroom/tournament.html", context)


def tournament_archive(request: HttpRequest, pk: int) -> HttpResponse:
    """An ended event's standings and every replay, one zip, streamed."""
    t = selectors.tournament(pk)
    if t is None:
        raise Http404
    if t.status not in ("finished", "cancelled") or not t.total_matches:
        message = f"{t.name} is {t.status}: its archive is made once it has ended, its table final."
        return render(request, "cardroom/forbidden.html", {"message": message}, status=409)
    response = StreamingHttpResponse(event_archive.stream(t), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{event_archive.filename(t)}"'
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
        return render(request, "cardroom/forbidden.html", {"message": exc.message}, status=exc.status)
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
