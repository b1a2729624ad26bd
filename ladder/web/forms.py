"""Forms of the web pages. They only shape input: the rules (names, package
checks, limits) live in ladder.services and come back as ServiceError."""

from __future__ import annotations

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from ladder.models import GAME_CHOICES
from ladder.services.accounts import USERNAME_RULES, check_username
from ladder.services.errors import ServiceError


class SignupForm(UserCreationForm):
    class Meta:
        model = User
        fields = ("username",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].help_text = USERNAME_RULES[0].upper() + USERNAME_RULES[1:] + "."

    def clean_username(self):
        # The API's rules, from the one place they live (ladder.services.accounts).
        try:
            return check_username(self.cleaned_data["username"])
        except ServiceError as exc:
            raise forms.ValidationError(exc.message) from None


class BotForm(forms.Form):
    game = forms.ChoiceField(choices=GAME_CHOICES)
    name = forms.CharField(
        max_length=40,
        help_text="2-40 characters: letters, digits, '_', '.', '-', starting with a letter or digit.",
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=2000)


class UploadForm(forms.Form):
    file = forms.FileField(
        help_text="A single .py or .js file, or a .zip / .tar.gz holding your bot (see /docs/bot-authors/#packaging).",
        widget=forms.ClearableFileInput(attrs={"accept": ".py,.zip,.tar.gz,.tgz"}),
    )
