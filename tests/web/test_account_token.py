"""The account page's API token in a real headless Chromium: masked until
asked for (nothing on the screen gives it away, the examples included),
shown and hidden again by its button, copied whole by Copy."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from tests.web import factories as f
from tests.web.conftest import login

pytestmark = pytest.mark.django_db(transaction=True)

SCREEN_TEXT = "() => document.body.innerText"


def test_the_token_is_masked_until_shown_and_copies_whole(web, live_server):
    user = f.user()
    login(web, user.username, f.PASSWORD)
    web.goto("/account/")
    key = Token.objects.get(user=user).key
    assert key not in web.evaluate(SCREEN_TEXT)  # not in the token's box, not in the curl examples
    masked = web.inner_text("[data-testid=api-token-masked]")
    assert masked.endswith(key[-4:]) and set(masked[:-4]) == {"•"}  # its last four tell two tokens apart
    assert "$CARDROOM_TOKEN" in web.inner_text("[data-testid=curl-example]")

    reveal = web.locator("[data-testid=token-reveal]")
    reveal.click()
    assert web.inner_text("[data-testid=api-token]") == key
    assert not web.is_visible("[data-testid=api-token-masked]")
    assert (reveal.inner_text(), reveal.get_attribute("aria-expanded")) == ("Hide", "true")
    reveal.click()
    assert key not in web.evaluate(SCREEN_TEXT)
    assert (reveal.inner_text(), reveal.get_attribute("aria-expanded")) == ("Show", "false")

    web.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    web.click("[data-testid=token-copy]")
    web.wait_for_selector("[data-testid=token-copy]:text('Copied')")
    assert web.evaluate("() => navigator.clipboard.readText()") == key
    assert key not in web.evaluate(SCREEN_TEXT)  # copied without being shown
