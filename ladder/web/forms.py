"""Forms of the web pages. They only shape input: the rules (names, package
checks, limits) live in ladder.services and come back as ServiceError."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from ladder.models import GAME_CHOICES


class SignupForm(UserCreationForm):
    class Meta:
        model = User
        fields = ("username",)


class BotForm(forms.Form):
    game = forms.ChoiceField(choices=GAME_CHOICES)
    name = forms.CharField(
        max_length=40,
        help_text="2-40 characters: letters, digits, '_', '.', '-', starting with a letter or digit.",
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=2000)


class UploadForm(forms.Form):
    file = forms.FileField(
        help_text="A single .py file, or a .zip / .tar.gz holding your bot (see /docs/bot-authors/#packaging).",
        widget=forms.ClearableFileInput(attrs={"accept": ".py,.zip,.tar.gz,.tgz"}),
    )
