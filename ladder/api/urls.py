from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from ladder.api import views

urlpatterns = [
    path("auth/register/", views.RegisterView.as_view(), name="api-register"),
    path("auth/token/", views.TokenView.as_view(), name="api-token"),
    path("games/", views.GamesView.as_view(), name="api-games"),
    path("ladders/", views.LadderList.as_view(), name="api-ladders"),
    path("ladders/<int:pk>/", views.LadderDetail.as_view(), name="api-ladder"),
    path("ladders/<int:pk>/standings/", views.StandingsView.as_view(), name="api-standings"),
    path("bots/", views.BotList.as_view(), name="api-bots"),
    path("bots/<int:pk>/", views.BotDetail.as_view(), name="api-bot"),
    path("bots/<int:pk>/versions/", views.VersionList.as_view(), name="api-versions"),
    path("matches/", views.MatchList.as_view(), name="api-matches"),
    path("matches/<int:pk>/", views.MatchDetail.as_view(), name="api-match"),
    path("matches/<int:pk>/replay/", views.ReplayView.as_view(), name="api-replay"),
    path("matches/<int:pk>/logs/<int:seat>/", views.LogView.as_view(), name="api-logs"),
    path("tournaments/", views.TournamentList.as_view(), name="api-tournaments"),
    path("tournaments/<int:pk>/", views.TournamentDetail.as_view(), name="api-tournament"),
    path("tournaments/<int:pk>/standings/", views.TournamentStandings.as_view(), name="api-tournament-standings"),
    path("tournaments/<int:pk>/matches/", views.TournamentMatches.as_view(), name="api-tournament-matches"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    # Last: every other path ending in "/" is a JSON 404 (a path without the
    # slash is redirected here by APPEND_SLASH first).
    re_path(r"^(?:[\s\S]*/)?$", views.not_found, name="api-not-found"),
]
