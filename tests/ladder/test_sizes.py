"""Sizes written one way everywhere (decision 210): MiB, as the docs give
the limits; the site's pages use the same through the ``size`` filter."""

from __future__ import annotations

import pytest

from cardroom.sizes import format_size
from ladder.templatetags.cardroom_author import size


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (512 * 1024 * 1024, "512 MiB"),
        (10 * 1024 * 1024, "10 MiB"),  # the upload limit: Django's filesizeformat said "10.0 MB"
        (int(1.5 * 1024 * 1024), "1.5 MiB"),
        (64 * 1024, "64 KiB"),
        (1000, "1000 bytes"),
        (1, "1 byte"),
    ],
)
def test_format_size(n, text):
    assert format_size(n) == text
    assert size(n) == text


@pytest.mark.django_db
@pytest.mark.usefixtures("fresh_limits")
def test_the_upload_form_gives_the_limit_in_mib(settings, client):
    from django.urls import reverse

    from tests.ladder import factories

    settings.CARDROOM_MAX_UPLOAD_BYTES = 10 * 1024 * 1024
    owner = factories.user()
    bot = factories.active_bot(owner)
    client.force_login(owner)
    page = client.get(reverse("web-my-bot", args=[bot.pk])).content.decode()
    assert "At most 10 MiB." in page and " MB" not in page
