"""The web suite: pages in a real headless Chromium (Playwright for Python,
driving the system's /usr/bin/chromium; no browser is ever downloaded)
against pytest-django's live server, with data made by really playing
matches (tests/web/factories.py).

Every page a browser test opens is watched: a JavaScript error (``pageerror``
or a console error), a failed request or an HTTP status >= 400 fails the
test. ``snap(page, name)`` writes the page's screenshots at desktop
(1280x800) and phone (390x844) widths to var/screenshots/.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls the
# tests make between browser steps are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "screenshots"
CHROMIUM = os.environ.get("CARDROOM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(autouse=True)
def _web_settings(request, settings):
    from django.core.cache import caches

    # The rate limits' cache is a database table (the embedded default): a
    # test with the database empties it too, so no test inherits the last
    # one's counts (a live server's requests all come from 127.0.0.1).
    stores = [caches["default"]] + ([caches["limits"]] if request.node.get_closest_marker("django_db") else [])
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)  # whitenoise warns when it is missing
    for store in stores:
        store.clear()
    yield
    for store in stores:
        store.clear()


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (scripts/install-system-packages.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


class Watch:
    """Everything that went wrong while a page was open."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.problems: list[str] = []
        self.allowed_status: set[tuple[str, int]] = set()

    def allow(self, path_part: str, status: int) -> None:
        self.allowed_status.add((path_part, status))

    def attach(self, page) -> None:
        page.on("pageerror", lambda exc: self.problems.append(f"pageerror: {exc}"))
        page.on("console", lambda msg: self.problems.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
        page.on("requestfailed", self._request_failed)
        page.on("response", self._response)

    def _request_failed(self, request) -> None:
        # ERR_ABORTED is the browser cancelling a load because the page went
        # on (a click that navigates while the favicon still loads), not a
        # failure of the server; CSP blocks and refused connections differ.
        if request.failure != "net::ERR_ABORTED":
            self.problems.append(f"requestfailed: {request.method} {request.url} ({request.failure})")

    def _response(self, response) -> None:
        if response.status >= 400 and not any(p in response.url and s == response.status for p, s in self.allowed_status):
            self.problems.append(f"HTTP {response.status}: {response.request.method} {response.url}")

    def check(self) -> None:
        assert not self.problems, "problems in the browser:\n" + "\n".join(self.problems)


@pytest.fixture
def web(browser, live_server):
    """A fresh browser context (desktop size) and page on the live server;
    the test fails on any JS error, failed request or HTTP error."""
    context = browser.new_context(viewport=DESKTOP, base_url=live_server.url, locale="en-GB", timezone_id="UTC")
    context.set_default_timeout(15_000)
    page = context.new_page()
    watch = Watch(live_server.url)
    watch.attach(page)
    page.watch = watch
    yield page
    try:
        watch.check()
    finally:
        context.close()


# A full-page screenshot of a long page took over 15 s on a loaded 2-core
# machine: the pictures are for people, so they get a minute of their own.
SNAP_TIMEOUT_MS = 60_000


def snap(page, name: str) -> None:
    """Full-page screenshots of the current page at desktop and phone widths."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    page.set_viewport_size(DESKTOP)
    page.wait_for_timeout(50)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-desktop.png"), full_page=True, timeout=SNAP_TIMEOUT_MS)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(80)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-phone.png"), full_page=True, timeout=SNAP_TIMEOUT_MS)
    page.set_viewport_size(size or DESKTOP)


def login(page, username: str, password: str) -> None:
    page.goto("/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("[data-testid=login-form] button[type=submit]")
    page.wait_for_url("**/my/bots/")
