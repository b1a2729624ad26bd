from django.contrib.auth import views as auth_views
from django.urls import path

from ladder.web import tournaments, views

urlpatterns = [
    path("", views.home, name="web-home"),
    path("rules/<str:game>/", views.rules, name="web-rules"),
    path("ladders/<int:pk>/", views.ladder_detail, name="web-ladder"),
    path("bots/<int:pk>/", views.bot_detail, name="web-bot"),
    path("matches/", views.matches, name="web-matches"),
    path("matches/<int:pk>/", views.match_detail, name="web-match"),
    path("matches/<int:pk>/frames/", views.match_frames, name="web-match-frames"),
    path("matches/<int:pk>/logs/<int:seat>/", views.match_log, name="web-match-log"),
    path("tournaments/", tournaments.tournament_list, name="web-tournaments"),
    path("tournaments/new/", tournaments.tournament_new, name="web-tournament-new"),
    path("tournaments/<int:pk>/", tournaments.tournament_detail, name="web-tournament"),
    path("tournaments/<int:pk>/<str:action>/", tournaments.tournament_control, name="web-tournament-control"),
    path("my/bots/", views.my_bots, name="web-my-bots"),
    path("my/bots/<int:pk>/", views.my_bot, name="web-my-bot"),
    path("account/", views.account, name="web-account"),
    path("signup/", views.signup, name="web-signup"),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="cardroom/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
