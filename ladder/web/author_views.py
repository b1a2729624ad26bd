"""The bot author's pages: the documents and starter bots, "Write your first
bot", managing a bot (description, withdraw / re-enter, delete a version or
the bot) and the account (e-mail, password change and reset, deletion).

Kept apart from ladder.web.views so that the pages other work changes
(signup, the leaderboards) merge cleanly. Writes go through
ladder.services.bot_management and ladder.services.accounts."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordChangeForm
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.http import require_POST

from ladder import limits
from ladder.models import Bot, BotVersion, Match, Participant
from ladder.selectors import progress_text, validation_progress
from ladder.services import account_email as emails
from ladder.services import accounts, bot_management
from ladder.services.bots import game_label
from ladder.services.errors import ServiceError
from ladder.web import docs, runtime_versions
from ladder.web.author_forms import DeleteAccountForm, DescriptionForm, EmailForm

# ---------------------------------------------------------------------------
# Documents and starter bots
# ---------------------------------------------------------------------------


def docs_index(request: HttpRequest) -> HttpResponse:
    return render(request, "cardroom/docs_index.html", {"docs": docs.DOCS, "starters": docs.STARTERS, "kits": docs.STARTER_KITS})


def doc_page(request: HttpRequest, slug: str) -> HttpResponse:
    doc = docs.DOCS_BY_SLUG.get(slug)
    if doc is None:
        raise Http404("no such document")
    if slug == "first-bot":
        return render(
            request,
            "cardroom/first_bot.html",
            {"doc": doc, "docs": docs.DOCS, "starters": docs.STARTERS, "kits": docs.STARTER_KITS, "wheel": docs.author_wheel()},
        )
    inserts = None
    if slug == "runtimes":  # the versions of this server's runtimes, read from the system
        inserts = {runtime_versions.MARKER: runtime_versions.current().markdown()}
    rendered = docs.render_file(docs.docs_dir() / doc.filename, inserts=inserts)
    if rendered is None:
        raise Http404("this document is missing from the installation")
    return render(
        request,
        "cardroom/doc.html",
        {"doc": doc, "docs": docs.DOCS, "doc_html": rendered[0], "toc_html": rendered[1], "source": f"docs/{doc.filename}"},
    )


def starter_download(request: HttpRequest, filename: str) -> FileResponse:
    path = docs.starter_path(filename)
    if path is None or not path.is_file():
        raise Http404("no such starter bot")
    response = FileResponse(path.open("rb"), as_attachment=True, filename=filename, content_type="text/x-python")
    response["Cache-Control"] = "public, max-age=3600"
    return response


def starter_kit_download(request: HttpRequest, name: str) -> HttpResponse:
    kit = docs.STARTER_KITS_BY_NAME.get(name)
    if kit is None:
        raise Http404("no such starter kit")
    response = HttpResponse(docs.kit_zip(kit), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{kit.zip_name}"'
    response["Cache-Control"] = "public, max-age=3600"
    return response


def trainer_download(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(docs.trainer_zip(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{docs.TRAINER_ZIP}"'
    response["Cache-Control"] = "public, max-age=3600"
    return response


def wheel_download(request: HttpRequest, filename: str) -> FileResponse:
    wheel = docs.author_wheel()
    if wheel is None or filename != wheel.filename:
        raise Http404("no such package: the site offers only the wheel of the version it runs")
    response = FileResponse(wheel.path.open("rb"), as_attachment=True, filename=wheel.filename, content_type="application/octet-stream")
    response["Cache-Control"] = "public, max-age=3600"
    return response


# ---------------------------------------------------------------------------
# Managing a bot (the owner's page: ladder.web.views.my_bot)
# ---------------------------------------------------------------------------


def annotate_versions(bot: Bot, versions: list[BotVersion]) -> None:
    """Give each version of the owner's page its validation progress (in
    words) and whether it may be deleted now."""
    played = set(
        Participant.objects.filter(bot=bot)
        .exclude(match__kind=Match.Kind.VALIDATION)
        .values_list("version_id", flat=True)
        .distinct()
    )
    for v in versions:
        v.progress = validation_progress(v)
        v.progress_text = progress_text(v, v.progress)
        v.deletable = v.pk not in played and v.pk != bot.current_version_id and v.status != BotVersion.Status.VALIDATING


def bot_management_context(bot: Bot) -> dict:
    return {
        "description_form": DescriptionForm(initial={"description": bot.description}),
        "game_label": game_label(bot.game),
    }


def _own_bot(request: HttpRequest, pk: int) -> Bot:
    bot = Bot.objects.select_related("owner", "current_version").filter(pk=pk).first()
    if bot is None or bot.owner_id != request.user.pk:
        raise Http404("no such bot among yours")
    return bot


def _back(bot: Bot, anchor: str = "") -> HttpResponse:
    return redirect(reverse("web-my-bot", args=[bot.pk]) + anchor)


@login_required
@require_POST
def bot_description(request: HttpRequest, pk: int) -> HttpResponse:
    bot = _own_bot(request, pk)
    form = DescriptionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The description was not saved: " + " ".join(form.errors.get("description", [])))
        return _back(bot, "#manage")
    try:
        bot_management.edit_description(bot=bot, user=request.user, description=form.cleaned_data["description"])
    except ServiceError as exc:
        messages.error(request, f"The description was not saved: {exc.message}.")
    else:
        messages.success(request, "The description was saved; it shows on the bot's public page.")
    return _back(bot, "#manage")


@login_required
@require_POST
def bot_withdraw(request: HttpRequest, pk: int) -> HttpResponse:
    bot = _own_bot(request, pk)
    bot_management.withdraw(bot=bot, user=request.user)
    messages.success(
        request,
        f"{bot.name} is withdrawn from the {game_label(bot.game)} ladders: it keeps its history and plays no more "
        "matches until you re-enter it.",
    )
    return _back(bot, "#manage")


@login_required
@require_POST
def bot_reenter(request: HttpRequest, pk: int) -> HttpResponse:
    bot = _own_bot(request, pk)
    bot_management.reenter(bot=bot, user=request.user)
    if bot.current_version_id:
        text = f"{bot.name} is back on the {game_label(bot.game)} ladders, with the ratings it had."
    else:
        text = f"{bot.name} is entered again; it plays once a version passes validation."
    messages.success(request, text)
    return _back(bot, "#manage")


@login_required
def bot_delete(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: what deleting means, and a confirmation; POST: delete."""
    bot = _own_bot(request, pk)
    if request.method == "POST":
        try:
            bot_management.delete_bot(bot=bot, user=request.user)
        except ServiceError as exc:
            messages.error(request, f"{exc.message[0].upper()}{exc.message[1:]}.")
            return _back(bot, "#manage")
        messages.success(request, f"{bot.name} and its versions are deleted.")
        return redirect("web-my-bots")
    played = Participant.objects.filter(bot=bot).exclude(match__kind=Match.Kind.VALIDATION).count()
    # The events that hold it: an entry keeps the bot (decision 190).
    events = [e.tournament for e in bot.tournament_entries.select_related("tournament").order_by("tournament_id")]
    context = {"bot": bot, "played": played, "events": events, "game_label": game_label(bot.game)}
    return render(request, "cardroom/bot_delete.html", context)


@login_required
@require_POST
def version_delete(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    bot = _own_bot(request, pk)
    version = bot.versions.filter(number=number).first()
    if version is None:
        raise Http404("no such version")
    try:
        bot_management.delete_version(version=version, user=request.user)
    except ServiceError as exc:
        messages.error(request, f"{exc.message[0].upper()}{exc.message[1:]}.")
    else:
        messages.success(request, f"Version {number} of {bot.name} is deleted.")
    return _back(bot, "#versions-h")


# ---------------------------------------------------------------------------
# Account: e-mail, password, deletion
# ---------------------------------------------------------------------------


def account_context(request: HttpRequest) -> dict:
    return {"email_form": EmailForm(instance=request.user), "email_verified": emails.is_verified(request.user)}


def _send_verification(request: HttpRequest) -> None:
    """Send the link to the user's address, within the per-address limit."""
    address = request.user.email
    refused = limits.refusal(request, "mail-address", emails.address_key(address))
    if refused:
        messages.error(request, f"No verification link was sent to {address}: {refused.message}")
        return
    emails.request_verification(request.user, request.get_host(), request.is_secure())
    messages.success(
        request,
        f"A verification link is on its way to {address}. Open it to confirm the address: "
        "until then no password reset is sent there.",
    )


@login_required
@require_POST
def account_email(request: HttpRequest) -> HttpResponse:
    if request.POST.get("action") == "resend":
        if request.user.email and not emails.is_verified(request.user):
            _send_verification(request)
        return redirect("web-account")
    form = EmailForm(request.POST, instance=request.user)
    if not form.is_valid():
        messages.error(request, "The e-mail address was not saved: " + " ".join(form.errors.get("email", [])))
    elif emails.set_email(request.user, form.cleaned_data["email"]):
        _send_verification(request)
    elif form.cleaned_data["email"]:
        messages.success(request, "Your e-mail address is saved and verified: a password reset can be sent there.")
    else:
        messages.success(request, "Your e-mail address was removed: you cannot reset a forgotten password now.")
    return redirect("web-account")


def verify_email(request: HttpRequest, token: str) -> HttpResponse:
    """The link of the verification e-mail: opening it proves the address."""
    try:
        user = emails.verify(token)
    except ServiceError as exc:
        return render(request, "cardroom/email_verified.html", {"error": exc.message}, status=400)
    return render(request, "cardroom/email_verified.html", {"email": user.email})


_TOKEN_ROTATED = "Your API token was replaced too: programs using the old one must be given the new one (account page)."


class PasswordChange(auth_views.PasswordChangeView):
    """Django's view (it keeps this session signed in, and ends the others),
    and a new API token."""

    template_name = "cardroom/password_change.html"
    form_class = PasswordChangeForm
    success_url = reverse_lazy("web-account")

    def form_valid(self, form):
        response = super().form_valid(form)
        accounts.rotate_token(form.user)
        messages.success(self.request, f"Your password was changed. Other browsers signed in as you are signed out. {_TOKEN_ROTATED}")
        return response


class PasswordReset(auth_views.PasswordResetView):
    """The reset request: rate-limited per client and per address, and
    answered alike for every address (a worker looks the address up and
    sends the e-mail: ladder.services.account_email)."""

    template_name = "cardroom/password_reset.html"
    success_url = reverse_lazy("web-password-reset-done")

    def post(self, request, *args, **kwargs):
        refused = limits.refusal(request, "reset")
        form = self.get_form()
        if not refused and form.is_valid():
            email = form.cleaned_data["email"]
            refused = limits.refusal(request, "mail-address", emails.address_key(email))
            if not refused:
                emails.request_password_reset(email, request.get_host(), request.is_secure())
                return redirect(self.success_url)
        if refused:
            response = render(request, self.template_name, {"form": form, "limit_error": refused.message}, status=429)
            response["Retry-After"] = str(refused.retry_after)
            return response
        return self.form_invalid(form)


class PasswordResetConfirm(auth_views.PasswordResetConfirmView):
    template_name = "cardroom/password_reset_confirm.html"
    success_url = reverse_lazy("web-password-reset-complete")

    def form_valid(self, form):
        response = super().form_valid(form)
        accounts.rotate_token(form.user)
        return response


@login_required
def account_delete(request: HttpRequest) -> HttpResponse:
    form = DeleteAccountForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        name = request.user.username
        accounts.delete_account(request.user)
        logout(request)
        messages.success(
            request, f"The account {name} is deleted. Its bots' matches stay in the history under an anonymous name."
        )
        return redirect("web-home")
    bots = Bot.objects.filter(owner=request.user).order_by("game", "name")
    return render(request, "cardroom/account_delete.html", {"form": form, "bots": bots})
