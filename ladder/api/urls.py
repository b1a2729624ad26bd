from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from ladder import converters  # noqa: F401  (registers the "id" and "seat" path converters)
from ladder.api import views

urlpatterns = [
    path("", views.ApiRoot.as_view(), name="api-root"),
    path("auth/me/", views.MeView.as_view(), name="api-me"),
    path("auth/register/", views.RegisterView.as_view(), name="api-register"),
    path("auth/token/", views.TokenView.as_view(), name="api-token"),
    path("games/", views.GamesView.as_view(), name="api-games"),
    path("ladders/", views.LadderList.as_view(), name="api-ladders"),
    path("ladders/<id:pk>/", views.LadderDetail.as_view(), name="api-ladder"),
    path("ladders/<id:pk>/standings/", views.StandingsView.as_view(), name="api-standings"),
    path("bots/", views.BotList.as_view(), name="api-bots"),
    path("bots/<id:pk>/", views.BotDetail.as_view(), name="api-bot"),
    path("bots/<id:pk>/versions/", views.VersionList.as_view(), name="api-versions"),
    path("bots/<id:pk>/versions/<id:number>/", views.VersionDetail.as_view(), name="api-version"),
    path("matches/", views.MatchList.as_view(), name="api-matches"),
    path("matches/<id:pk>/", views.MatchDetail.as_view(), name="api-match"),
    path("matches/<id:pk>/replay/", views.ReplayView.as_view(), name="api-replay"),
    path("matches/<id:pk>/logs/<seat:seat>/", views.LogView.as_view(), name="api-logs"),
    path("tournaments/", views.TournamentList.as_view(), name="api-tournaments"),
    path("tournaments/<id:pk>/", views.TournamentDetail.as_view(), name="api-tournament"),
    path("tournaments/<id:pk>/standings/", views.TournamentStandings.as_view(), name="api-tournament-standings"),
    path("tournaments/<id:pk>/matches/", views.TournamentMatches.as_view(), name="api-tournament-matches"),
    path("tournaments/<id:pk>/entries/", views.TournamentEntries.as_view(), name="api-tournament-entries"),
    path("tournaments/<id:pk>/entries/<id:bot>/", views.TournamentEntryDetail.as_view(), name="api-tournament-entry"),
    path("play/", views.PlayStart.as_view(), name="api-play"),
    path("play/<id:pk>/", views.PlaySeat.as_view(), name="api-play-seat"),
    path("play/<id:pk>/action/", views.PlayAction.as_view(), name="api-play-action"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view: its init script is a request of its own, not inline
    # (the Content-Security-Policy runs no inline script).
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="cardroom/swagger_ui.html"),
        name="api-docs",
    ),
    # Last: every other path ending in "/" is a JSON 404 (a path without the
    # slash is redirected here by APPEND_SLASH first).
    re_path(r"^(?:[\s\S]*/)?$", views.not_found, name="api-not-found"),
]
