from django.contrib.auth import views as auth_views
from django.urls import path

from ladder import converters  # noqa: F401  (registers the "id" and "seat" path converters)
from ladder.web import views

urlpatterns = [
    path("", views.home, name="web-home"),
    path("rules/<str:game>/", views.rules, name="web-rules"),
    path("ladders/<id:pk>/", views.ladder_detail, name="web-ladder"),
    path("bots/<id:pk>/", views.bot_detail, name="web-bot"),
    path("matches/", views.matches, name="web-matches"),
    path("matches/<id:pk>/", views.match_detail, name="web-match"),
    path("matches/<id:pk>/frames/", views.match_frames, name="web-match-frames"),
    path("matches/<id:pk>/logs/<seat:seat>/", views.match_log, name="web-match-log"),
    path("my/bots/", views.my_bots, name="web-my-bots"),
    path("my/bots/<id:pk>/", views.my_bot, name="web-my-bot"),
    path("account/", views.account, name="web-account"),
    path("signup/", views.signup, name="web-signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
