"""The bot author's path in a real headless Chromium against the live server,
with a real Celery worker validating the upload in the sandbox: from the home
page through "Write your first bot" (download the starter, sign up, create
a bot, upload it), the validation progress updating without a reload, the
bot on the leaderboard, then editing its description, withdrawing and
re-entering it, and changing the password. Screenshots of the new pages go
to var/screenshots/ (desktop and phone widths)."""

from __future__ import annotations

import pytest

from ladder.models import Bot, BotVersion
from tests.ladder.worker_fixtures import celery_workers_fixture, only_ladders  # noqa: F401 (the fixture)
from tests.web import factories as f
from tests.web.conftest import DESKTOP, PHONE, login, snap

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LIMITS = {"startup_ms": 8000, "per_move_ms": 1000, "overage_ms": 4000, "total_ms": 30000}
NEW_PASSWORD = "An-even-longer-pass-5678"


def test_a_new_author_from_the_home_page_to_the_leaderboard_and_back(web, celery_workers, tmp_path):
    ladders = only_ladders("allegra", [2, 4], **LIMITS)

    # the home page leads to "Write your first bot", which offers the starters
    web.goto("/")
    web.click("[data-testid=home-first-bot]")
    web.wait_for_url("**/docs/first-bot/")
    assert "Write your first bot" in web.inner_text("h1")
    snap(web, "first-bot")
    with web.expect_download() as download:
        web.click("[data-testid='starter-random_bot.py']")
    starter = tmp_path / download.value.suggested_filename
    download.value.save_as(starter)
    assert starter.name == "random_bot.py"
    assert starter.read_bytes() == (f.ROOT / "bots" / "random_bot.py").read_bytes()

    # sign up from there, create a bot, upload the starter (made a little
    # slow to start, so each validation match lasts a few seconds)
    web.click("[data-testid=first-bot-signup]")
    web.wait_for_url("**/signup/")
    web.fill("#id_username", "newcomer")
    web.fill("#id_password1", f.PASSWORD)
    web.fill("#id_password2", f.PASSWORD)
    web.click("[data-testid=signup-form] button[type=submit]")
    web.wait_for_url("**/my/bots/")
    web.select_option("#id_game", "allegra")
    web.fill("#id_name", "first-bot")
    web.click("[data-testid=create-bot] button[type=submit]")
    web.wait_for_url("**/my/bots/*/")
    bot = Bot.objects.get(game="allegra", name="first-bot")
    mine = starter.with_name("my_first_bot.py")
    mine.write_text("import time\ntime.sleep(3)  # think about it first\n" + starter.read_text())
    web.set_input_files("input[type=file]", str(mine))
    web.click("[data-testid=upload-form] button[type=submit]")
    web.wait_for_selector("text=Uploaded my_first_bot.py as version 1")

    # no worker yet: the version waits, and says where in the queue
    progress = web.locator("[data-testid=validation-progress]")
    assert "In the validation queue: place 1" in progress.inner_text()
    snap(web, "validation-queued")

    # a worker takes it: the page follows the matches without a reload
    celery_workers.start("author-web")
    web.wait_for_selector("[data-testid=validation-progress]:has-text('Validating: playing match')", timeout=60_000)
    assert "of 2" in progress.inner_text()
    snap(web, "validation-running")
    web.wait_for_selector("tr[data-version='1'][data-status='active']", timeout=120_000)
    assert "Playing version 1 on the Allegra ladders" in web.inner_text("[data-testid=bot-state]")
    log = web.locator("[data-testid=validation-log]").first
    match_links = log.locator("a[href^='/matches/']")
    assert match_links.count() >= 2  # the log links the match pages, not API paths
    assert log.locator("a[href^='/api/']").count() == 0
    snap(web, "my-bot-active")

    # on the leaderboard
    web.goto(f"/ladders/{ladders[2].pk}/")
    web.wait_for_selector("[data-testid=standings] tr[data-bot='first-bot']")

    # edit the description
    web.goto(f"/my/bots/{bot.pk}/")
    web.fill("[data-testid=description-form] textarea", "My first bot: random, but patient.")
    web.click("[data-testid=description-form] button[type=submit]")
    web.wait_for_selector("text=The description was saved")
    web.goto(f"/bots/{bot.pk}/")
    assert "My first bot: random, but patient." in web.inner_text(".description")

    # withdraw it: gone from the leaderboard, history kept; then re-enter it
    web.goto(f"/my/bots/{bot.pk}/")
    web.click("[data-testid=withdraw]")
    web.wait_for_selector("[data-testid=withdrawn-state]")
    snap(web, "my-bot-withdrawn")
    web.goto(f"/ladders/{ladders[2].pk}/")
    web.wait_for_selector("[data-testid=standings]")
    assert web.locator("[data-testid=standings] tr[data-bot='first-bot']").count() == 0
    assert BotVersion.objects.filter(bot=bot).count() == 1
    web.goto(f"/my/bots/{bot.pk}/")
    web.click("[data-testid=reenter]")
    web.wait_for_selector("[data-testid=withdraw]")
    web.goto(f"/ladders/{ladders[2].pk}/")
    web.wait_for_selector("[data-testid=standings] tr[data-bot='first-bot']")

    # the delete page of a bot (not confirmed here)
    web.goto(f"/my/bots/{bot.pk}/delete/")
    snap(web, "bot-delete")

    # change the password, then sign in with the new one
    web.goto("/account/")
    snap(web, "account-settings")
    web.click("[data-testid=password-change-link]")
    web.wait_for_url("**/account/password/")
    snap(web, "password-change")
    web.fill("#id_old_password", f.PASSWORD)
    web.fill("#id_new_password1", NEW_PASSWORD)
    web.fill("#id_new_password2", NEW_PASSWORD)
    web.click("[data-testid=password-change-form] button[type=submit]")
    web.wait_for_selector("text=Your password was changed")
    web.click("nav button:has-text('Log out')")
    web.wait_for_url("**/")
    login(web, "newcomer", NEW_PASSWORD)
    web.goto("/")  # leave no refresh running


def fits_a_phone(page) -> bool:
    """The page is no wider than a phone's screen (nothing scrolls sideways)."""
    page.set_viewport_size(PHONE)
    width = page.evaluate("document.documentElement.scrollWidth")
    page.set_viewport_size(DESKTOP)
    return width <= PHONE["width"]


def test_document_pages_and_account_pages_look_right(web):
    owner = f.user("reader")
    web.goto("/docs/")
    from ladder.web.docs import DOCS

    listed = web.locator("[data-testid=docs-list] a")
    assert listed.count() == len(DOCS)
    texts = " | ".join(listed.nth(i).inner_text() for i in range(listed.count()))
    assert "The bot SDK" in texts and "Events and tournaments" in texts, texts
    snap(web, "docs-index")
    web.click("[data-testid=docs-list] a:has-text('The bot protocol')")
    web.wait_for_url("**/docs/protocol/")
    assert web.locator("[data-testid=doc] h2").count() >= 5
    snap(web, "doc-protocol")
    assert fits_a_phone(web)
    assert web.locator("[data-testid=doc] a[href='/docs/starters/random_bot.py']").count() >= 1
    web.goto("/docs/bot-authors/")
    snap(web, "doc-bot-authors")
    assert fits_a_phone(web)
    web.goto("/docs/first-bot/")
    assert fits_a_phone(web)
    web.goto("/password-reset/")
    snap(web, "password-reset")
    login(web, owner.username, f.PASSWORD)
    web.goto("/account/delete/")
    snap(web, "account-delete")
