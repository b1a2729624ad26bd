from django.contrib.auth import views as auth_views
from django.urls import path

from ladder import converters  # noqa: F401  (registers the "id" and "seat" path converters)
from ladder.web import author_views, tournaments, views

urlpatterns = [
    path("", views.home, name="web-home"),
    path("rules/<str:game>/", views.rules, name="web-rules"),
    path("ladders/<id:pk>/", views.ladder_detail, name="web-ladder"),
    path("bots/<id:pk>/", views.bot_detail, name="web-bot"),
    path("matches/", views.matches, name="web-matches"),
    path("matches/<id:pk>/", views.match_detail, name="web-match"),
    path("matches/<id:pk>/frames/", views.match_frames, name="web-match-frames"),
    path("matches/<id:pk>/logs/<seat:seat>/", views.match_log, name="web-match-log"),
    path("tournaments/", tournaments.tournament_list, name="web-tournaments"),
    path("tournaments/new/", tournaments.tournament_new, name="web-tournament-new"),
    path("tournaments/<id:pk>/", tournaments.tournament_detail, name="web-tournament"),
    path("tournaments/<id:pk>/entries/", tournaments.tournament_entry, name="web-tournament-entry"),
    path("tournaments/<id:pk>/archive.zip", tournaments.tournament_archive, name="web-tournament-archive"),
    path("tournaments/<id:pk>/<event_action:action>/", tournaments.tournament_control, name="web-tournament-control"),
    path("my/bots/", views.my_bots, name="web-my-bots"),
    path("my/bots/<id:pk>/", views.my_bot, name="web-my-bot"),
    path("account/", views.account, name="web-account"),
    path("signup/", views.signup, name="web-signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    *[  # the bot author's pages: documents, managing bots, the account (ladder.web.author_views)
        path("docs/", author_views.docs_index, name="web-docs"),
        path("docs/starters/<str:filename>", author_views.starter_download, name="web-starter"),
        path("docs/starter-kits/<slug:name>.zip", author_views.starter_kit_download, name="web-starter-kit"),
        path("docs/cardroom-trainer.zip", author_views.trainer_download, name="web-trainer"),
        path("download/<str:filename>", author_views.wheel_download, name="web-wheel"),
        path("docs/<slug:slug>/", author_views.doc_page, name="web-doc"),
        path("my/bots/<id:pk>/description/", author_views.bot_description, name="web-bot-description"),
        path("my/bots/<id:pk>/withdraw/", author_views.bot_withdraw, name="web-bot-withdraw"),
        path("my/bots/<id:pk>/reenter/", author_views.bot_reenter, name="web-bot-reenter"),
        path("my/bots/<id:pk>/delete/", author_views.bot_delete, name="web-bot-delete"),
        path("my/bots/<id:pk>/versions/<version:number>/delete/", author_views.version_delete, name="web-version-delete"),
        path("account/email/", author_views.account_email, name="web-account-email"),
        path("account/verify/<str:token>/", author_views.verify_email, name="web-verify-email"),
        path("account/password/", author_views.PasswordChange.as_view(), name="web-password-change"),
        path("account/delete/", author_views.account_delete, name="web-account-delete"),
        path("password-reset/", author_views.PasswordReset.as_view(), name="web-password-reset"),
        path(
            "password-reset/sent/",
            auth_views.PasswordResetDoneView.as_view(template_name="cardroom/password_reset_done.html"),
            name="web-password-reset-done",
        ),
        path("reset/<uidb64>/<token>/", author_views.PasswordResetConfirm.as_view(), name="web-password-reset-confirm"),
        path(
            "reset/done/",
            auth_views.PasswordResetCompleteView.as_view(template_name="cardroom/password_reset_complete.html"),
            name="web-password-reset-complete",
        ),
    ],
]
