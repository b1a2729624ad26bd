"""Forms of the bot author's pages (ladder.web.author_views)."""

from __future__ import annotations

from django import forms
from django.contrib.auth.models import User

from ladder.services.bot_management import DESCRIPTION_LIMIT


class DescriptionForm(forms.Form):
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=DESCRIPTION_LIMIT,
        strip=False,
        help_text=f"Shown on the bot's public page; at most {DESCRIPTION_LIMIT} characters.",
    )


class EmailForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("email",)
        labels = {"email": "E-mail address"}
        help_texts = {"email": "Only used to send you a password reset link, once you have opened the link sent there to verify it; leave it empty to have none."}


class DeleteAccountForm(forms.Form):
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
        strip=False,
        help_text="Your password, to confirm that you mean it.",
    )

    def __init__(self, user, *args, **kwargs):
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self):
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError("That is not your password: type your current password to delete the account.")
        return password
