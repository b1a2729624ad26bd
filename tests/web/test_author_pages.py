"""The bot author's pages through Django's test client: the documents (safe
rendering, links rewritten to the site), the starter downloads, managing a
bot (only its owner), validation progress and log links, the account pages
(e-mail, password reset by e-mail, deletion)."""

from __future__ import annotations

import re

import pytest
from django.http import HttpRequest
from django.test import Client
from django.urls import reverse

from ladder.models import Bot, BotVersion, Match
from ladder.services import accounts
from ladder.services import validation as validation_services
from ladder.services.errors import ServiceError
from ladder.templatetags.cardroom_author import link_site_paths
from ladder.web import docs
from tests.web import factories as f

pytestmark = pytest.mark.django_db


def _client(user=None) -> Client:
    c = Client()
    if user is not None:
        c.force_login(user)
    return c


# -- documents ------------------------------------------------------------------------


@pytest.mark.parametrize("slug", [d.slug for d in docs.DOCS])
def test_every_document_renders_with_its_sections(slug):
    response = _client().get(reverse("web-doc", args=[slug]))
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count("<h2") >= 3
    # every document lists the others
    for d in docs.DOCS:
        assert f'href="/docs/{d.slug}/"' in page


def test_every_document_of_docs_is_published_or_says_why_not():
    in_folder = {p.name for p in docs.docs_dir().glob("*.md")}
    published = {d.filename for d in docs.DOCS if d.filename}
    assert in_folder == published | set(docs.UNPUBLISHED), "a document of docs/ is neither on the site nor in UNPUBLISHED"
    assert not published & set(docs.UNPUBLISHED)


def test_the_tournaments_document_explains_the_standings_columns():
    page = _client().get("/docs/tournaments/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="standings"' in html and "score margin per match" in html and "head-to-head" in html
    assert 'href="/docs/tournaments/"' in _client().get("/docs/").content.decode()


def test_links_between_documents_go_to_their_pages_and_starters_download():
    page = _client().get("/docs/protocol/").content.decode()
    assert 'href="/docs/starters/random_bot.py"' in page
    assert 'href="/docs/starters/allegra_greedy.py"' in page
    guide = _client().get("/docs/bot-authors/").content.decode()
    assert 'href="/docs/protocol/"' in guide and 'href="/docs/protocol/#time"' in guide
    assert "protocol.md" not in re.sub(r"<code>.*?</code>", "", guide)


def test_markdown_rendering_escapes_raw_html_and_drops_unsafe_links():
    html, _ = docs.render_markdown(
        "<script>alert(1)</script>\n\nHi <b onclick='x()'>there</b> [bad](javascript:alert(1)) "
        "[ops](operations.md) [ok](https://example.org/a) [here](#top)\n"
    )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b " not in html and "&lt;b onclick" in html
    assert "javascript:" not in html
    assert 'href="operations.md"' not in html  # not published on the site
    assert 'href="https://example.org/a"' in html and 'href="#top"' in html


def test_starter_bots_download_as_files():
    for starter in docs.STARTERS:
        response = _client().get(reverse("web-starter", args=[starter.filename]))
        assert response.status_code == 200
        assert response["Content-Disposition"] == f'attachment; filename="{starter.filename}"'
        assert b"".join(response.streaming_content) == (f.ROOT / "bots" / starter.filename).read_bytes()
    assert _client().get("/docs/starters/__init__.py").status_code == 404
    assert _client().get("/docs/starters/..%2Fmanage.py").status_code == 404


def test_docs_are_linked_from_the_navigation_home_and_upload_page():
    owner = f.user("linker")
    bot = f.active_bot(owner, "allegra", "linked")
    home = _client().get("/").content.decode()
    assert 'href="/docs/first-bot/"' in home and 'href="/docs/"' in home
    upload = _client(owner).get(reverse("web-my-bot", args=[bot.pk])).content.decode()
    assert 'href="/docs/protocol/"' in upload and 'href="/docs/first-bot/"' in upload


# -- validation progress and the log's links --------------------------------------------------


def test_owner_page_shows_queue_place_then_which_match_is_playing():
    owner = f.user("waiter")
    bot = f.active_bot(owner, "allegra", "waiting")
    from ladder.services import bots as bot_services

    first = bot_services.upload_version(bot=bot, filename="a.py", data=f.program("random", "allegra") + b"\n# a\n")
    second = bot_services.upload_version(bot=bot, filename="b.py", data=f.program("random", "allegra") + b"\n# b\n")
    c = _client(owner)
    page = c.get(reverse("web-my-bot", args=[bot.pk]) + "?partial=versions").content.decode()
    assert "In the validation queue: place 2</strong> (1 version ahead)" in page
    assert "In the validation queue: place 1</strong> (next in line)" in page
    assert 'data-refresh-url' in page  # the page polls while a version waits

    matches = validation_services.create_validation_matches(first)
    BotVersion.objects.filter(pk=first.pk).update(status="validating")
    page = c.get(reverse("web-my-bot", args=[bot.pk]) + "?partial=versions").content.decode()
    assert "Validating: playing match 1 of 2</strong>" in page
    assert f'href="/matches/{matches[0].pk}/"' in page
    assert "In the validation queue: place 1</strong>" in page  # the second one moved up
    assert second.pk


def test_validation_log_links_to_match_pages_not_api_paths():
    text = "FAILED: match 12\n  the match: /matches/12/#event=3&view=seat-1 (x); log: /matches/12/logs/1/ <b>\n/api/matches/12/"
    html = str(link_site_paths(text))
    assert '<a href="/matches/12/#event=3&amp;view=seat-1">' in html
    assert '<a href="/matches/12/logs/1/">' in html
    assert "&lt;b&gt;" in html
    assert '<a href="/api/' not in html


# -- managing a bot --------------------------------------------------------------------------------


def test_owner_edits_withdraws_and_reenters_through_the_page():
    owner = f.user("manager")
    bot = f.active_bot(owner, "allegra", "managed")
    c = _client(owner)
    response = c.post(reverse("web-bot-description", args=[bot.pk]), {"description": "Greedy, now."}, follow=True)
    assert "The description was saved" in response.content.decode()
    assert Bot.objects.get(pk=bot.pk).description == "Greedy, now."
    response = c.post(reverse("web-bot-withdraw", args=[bot.pk]), follow=True)
    assert "is withdrawn from the Allegra ladders" in response.content.decode()
    assert Bot.objects.get(pk=bot.pk).withdrawn is not None
    ladder = f.ladder("allegra", 2)
    board = _client().get(reverse("web-ladder", args=[ladder.pk])).content.decode()
    assert 'data-bot="managed"' not in board
    c.post(reverse("web-bot-reenter", args=[bot.pk]))
    assert Bot.objects.get(pk=bot.pk).withdrawn is None
    board = _client().get(reverse("web-ladder", args=[ladder.pk])).content.decode()
    assert 'data-bot="managed"' in board


def test_others_cannot_manage_a_bot_through_the_pages():
    bot = f.active_bot(f.user("real-owner"), "allegra", "not-yours")
    intruder = _client(f.user("intruder"))
    for name in ("web-bot-description", "web-bot-withdraw", "web-bot-reenter", "web-bot-delete"):
        assert intruder.post(reverse(name, args=[bot.pk]), {"description": "mine"}).status_code == 404, name
    assert intruder.post(reverse("web-version-delete", args=[bot.pk, 1])).status_code == 404
    anonymous = _client().post(reverse("web-bot-withdraw", args=[bot.pk]))
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    bot.refresh_from_db()
    assert bot.description == "" and bot.withdrawn is None and bot.versions.count() == 1


def test_delete_bot_page_refuses_a_bot_with_history_and_deletes_one_without():
    data = f.league("allegra", 2, matches=2, seed=5)
    owner = data["owner"]
    played = next(p.bot for m in data["matches"] for p in m.participants.all() if p.bot.owner_id == owner.pk)
    c = _client(owner)
    page = c.get(reverse("web-bot-delete", args=[played.pk])).content.decode()
    assert "cannot be deleted" in page and "withdraw" in page
    c.post(reverse("web-bot-delete", args=[played.pk]))
    assert Bot.objects.filter(pk=played.pk).exists()
    fresh = f.active_bot(owner, "allegra", "short-lived")
    response = c.post(reverse("web-bot-delete", args=[fresh.pk]), follow=True)
    assert "short-lived and its versions are deleted" in response.content.decode()
    assert not Bot.objects.filter(pk=fresh.pk).exists()
    assert Match.objects.filter(pk__in=[m.pk for m in data["matches"]], status="finished").count() == len(data["matches"])


# -- the account ------------------------------------------------------------------------------------


# (The e-mail address and password resets: tests/web/test_account_email.py.)


def test_delete_account_needs_the_password_and_keeps_history():
    data = f.league("allegra", 2, matches=2, seed=8)
    owner = data["owner"]
    old_name = owner.username
    bots = list(Bot.objects.filter(owner=owner))
    c = _client(owner)
    wrong = c.post(reverse("web-account-delete"), {"password": "not it"})
    assert "That is not your password" in wrong.content.decode()
    response = c.post(reverse("web-account-delete"), {"password": f.PASSWORD}, follow=True)
    assert "is deleted" in response.content.decode()
    owner.refresh_from_db()
    assert owner.username.startswith("[deleted-") and not owner.is_active
    assert all(b.withdrawn for b in Bot.objects.filter(pk__in=[b.pk for b in bots]))
    match = next(m for m in data["matches"] if any(p.bot.owner_id == owner.pk for p in m.participants.all()))
    page = _client().get(reverse("web-match", args=[match.pk])).content.decode()
    assert match.participants.count() == 2 and "[deleted-" in page
    # (django-axes wants the request its lockouts are about)
    assert _client().login(request=HttpRequest(), username=owner.username, password=f.PASSWORD) is False
    # The old name stays taken, in any case: no one can pass for the old bots' author.
    for name in (old_name, old_name.upper()):
        with pytest.raises(ServiceError, match="taken"):
            accounts.create_account(name, "Another-pass-4821")


# -- starter kits and the Runtimes page --------------------------------------------------


def test_each_starter_kit_downloads_as_a_zip_that_is_a_bot_package(tmp_path):
    import io
    import zipfile

    from cardroom.packages import load_bot_package

    for kit in docs.STARTER_KITS:
        response = _client().get(reverse("web-starter-kit", args=[kit.name]))
        assert response.status_code == 200 and response["Content-Type"] == "application/zip"
        assert response["Content-Disposition"] == f'attachment; filename="{kit.zip_name}"'
        archive = zipfile.ZipFile(io.BytesIO(response.content))
        names = set(archive.namelist())
        folder = f.ROOT / "bots" / "starters" / kit.name
        assert f"{kit.name}/cardroom.toml" in names and f"{kit.name}/README.md" in names
        manifest = archive.read(f"{kit.name}/cardroom.toml").decode()
        assert manifest == (folder / "cardroom.toml").read_text()
        entry = manifest.split('entry = "', 1)[1].split('"', 1)[0]
        if kit.name == "cpp":  # the binary is built by the author: the sources and the Makefile are there, it is not
            assert {"cpp/bot.cpp", "cpp/Makefile"} <= names and "cpp/bot" not in names
        elif kit.name == "rust":  # likewise, with cargo's manifest beside the Makefile
            assert {"rust/src/main.rs", "rust/Makefile", "rust/Cargo.toml"} <= names and "rust/bot" not in names
        else:
            assert archive.read(f"{kit.name}/{entry}") == (folder / entry).read_bytes()
            (tmp_path / kit.zip_name).write_bytes(response.content)
            if kit.runtime == "python":  # the package checks take the zip as it is
                assert load_bot_package(tmp_path / kit.zip_name, tmp_path / "unpacked").entry == entry
    assert _client().get("/docs/starter-kits/cobol.zip").status_code == 404
    assert _client().get("/docs/starter-kits/..%2Fbots.zip").status_code == 404


@pytest.mark.parametrize("kit", ["cpp", "rust"])
def test_a_native_kit_zip_leaves_out_what_building_it_left_in_the_folder(tmp_path, kit):
    """Built in place (make, or cargo for Rust) and run locally, the folder
    zips to its sources alone: the binary, cargo's target/ and Cargo.lock,
    the run's logs stay out, since the kit's .gitignore names them."""
    import io
    import shutil
    import zipfile

    folder = tmp_path / kit
    shutil.copytree(f.ROOT / "bots" / "starters" / kit, folder)
    sources = {f"{kit}/{name}" for name, _ in docs.folder_files(folder)}
    left_behind = ["bot", "logs/seat-0.log"]
    if kit == "rust":
        left_behind += ["Cargo.lock", "target/release/bot", "target/release/deps/bot-0123", "target/CACHEDIR.TAG"]
    for name in left_behind:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"built")
    assert set(zipfile.ZipFile(io.BytesIO(docs.folder_zip(folder, kit))).namelist()) == sources
    assert f"{kit}/Makefile" in sources and f"{kit}/.gitignore" in sources


def test_starter_kits_are_linked_from_the_first_bot_page_the_index_and_the_runtimes_page():
    for path in ("/docs/first-bot/", "/docs/", "/docs/runtimes/"):
        page = _client().get(path).content.decode()
        for kit in docs.STARTER_KITS:
            assert f'href="/docs/starter-kits/{kit.name}.zip"' in page, (path, kit.name)
    assert 'href="/docs/runtimes/"' in _client().get("/docs/first-bot/").content.decode()


def test_the_runtimes_page_shows_the_versions_this_system_has():
    import os
    import subprocess

    page = _client().get("/docs/runtimes/").content.decode()
    numpy = subprocess.run(
        ["/usr/bin/python3", "-c", "import numpy, onnxruntime, platform; print(platform.python_version(), numpy.__version__, onnxruntime.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    glibc = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    libstdcxx = os.path.realpath("/usr/lib/x86_64-linux-gnu/libstdc++.so.6").rsplit("/", 1)[1]
    assert f"Python {numpy[0]}" in page and f"numpy {numpy[1]}" in page and f"ONNX Runtime {numpy[2]} (CPU)" in page
    assert f"Node.js {node}" in page
    assert glibc in page and libstdcxx in page
    assert "runtime versions:" not in page  # the marker was replaced


def test_the_example_trainer_downloads_from_the_train_a_bot_page():
    import io
    import zipfile

    page = _client().get("/docs/train/").content.decode()
    assert 'href="/docs/cardroom-trainer.zip"' in page
    response = _client().get("/docs/cardroom-trainer.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="cardroom-trainer.zip"'
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    for name in ("train.py", "policy.py"):  # the trainer imports the policy it exports from beside it
        assert archive.read(f"cardroom-trainer/{name}") == (f.ROOT / "research" / name).read_bytes()
    assert not [n for n in archive.namelist() if "__pycache__" in n or n.endswith(".pyc")]
