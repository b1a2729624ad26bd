"""The Django admin for operators: ladders, bots, versions, matches
(re-queue, cancel), ratings and events (pause, resume, cancel)."""

from django.contrib import admin, messages

from ladder.models import Bot, BotVersion, Ladder, Match, Participant, Rating, RatingChange, Tournament, TournamentEntry
from ladder.services import matches as match_services
from ladder.services import tournaments as tournament_services


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    list_display = ("name", "game", "players_per_match", "active", "per_move_ms", "total_ms")
    list_filter = ("game", "active")


class VersionInline(admin.TabularInline):
    model = BotVersion
    fields = ("number", "status", "filename", "size", "sha256", "created")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = ("name", "game", "owner", "builtin", "current_version", "created")
    list_filter = ("game", "builtin")
    search_fields = ("name", "owner__username")
    inlines = [VersionInline]


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ("bot", "number", "status", "size", "created")
    list_filter = ("status", "bot__game")
    search_fields = ("bot__name", "sha256")
    readonly_fields = ("bot", "number", "package", "filename", "sha256", "size", "created", "activated", "validation_log")


class ParticipantInline(admin.TabularInline):
    model = Participant
    fields = ("seat", "bot", "version", "score", "rank", "forfeit_reason", "elo_before", "elo_after")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.action(description="Re-queue the selected failed or cancelled matches")
def requeue_matches(modeladmin, request, queryset):
    for match in queryset:
        match_services.requeue(match)
    messages.info(request, "Re-queued the failed and cancelled ones among them.")


@admin.action(description="Cancel the selected queued matches")
def cancel_matches(modeladmin, request, queryset):
    for match in queryset:
        match_services.cancel(match)
    messages.info(request, "Cancelled the queued ones among them.")


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ("id", "ladder", "kind", "status", "attempts", "worker", "created", "finished")
    list_filter = ("status", "kind", "ladder")
    readonly_fields = ("seed", "attempts", "lease_token", "lease_expires", "worker", "error", "replay", "num_events", "started", "finished")
    inlines = [ParticipantInline]
    actions = [requeue_matches, cancel_matches]


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ("bot", "ladder", "elo", "ordinal", "mu", "sigma", "games", "wins", "forfeits", "provisional")
    list_filter = ("ladder",)
    search_fields = ("bot__name",)


@admin.register(RatingChange)
class RatingChangeAdmin(admin.ModelAdmin):
    list_display = ("id", "rating", "match", "elo_before", "elo_after", "created")

    def has_change_permission(self, request, obj=None):
        return False  # append-only history

    def has_delete_permission(self, request, obj=None):
        return False


class EntryInline(admin.TabularInline):
    model = TournamentEntry
    fields = ("index", "bot", "version")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    """Events are created on the "New event" page or the API (the service
    freezes the field and schedules the matches); here staff follow them and
    pause, resume or cancel."""

    list_display = ("name", "game", "format", "pairing", "table_size", "total_matches", "status", "created")
    list_filter = ("game", "format", "status")
    search_fields = ("name",)
    readonly_fields = [f.name for f in Tournament._meta.fields]
    inlines = [EntryInline]
    actions = ["pause", "resume", "cancel"]

    def has_add_permission(self, request) -> bool:
        return False

    def _each(self, request, queryset, action, done: str) -> None:
        from ladder.services.errors import ServiceError

        count = 0
        for t in queryset:
            try:
                action(t, request.user)
                count += 1
            except ServiceError as exc:
                self.message_user(request, f"{t.name}: {exc.message}", messages.WARNING)
        self.message_user(request, f"{count} event(s) {done}")

    @admin.action(description="Pause the selected events")
    def pause(self, request, queryset):
        self._each(request, queryset, tournament_services.pause, "paused")

    @admin.action(description="Resume the selected events")
    def resume(self, request, queryset):
        self._each(request, queryset, tournament_services.resume, "resumed")

    @admin.action(description="Cancel the selected events (queued matches are cancelled)")
    def cancel(self, request, queryset):
        self._each(request, queryset, tournament_services.cancel, "cancelled")
