"""REST API: games, bots and bot versions (upload), with every permission
rule and every upload error (docs/api.md)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from ladder.models import Bot, BotVersion
from tests.ladder import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _setup(settings):
    f.fast_passwords(settings)
    f.clear_caches()
    yield
    f.clear_caches()


@pytest.fixture
def owner():
    return f.user("owner")


@pytest.fixture
def my_bot(owner):
    return f.bot(owner, game="allegra", name="my-bot")


def upload(api, bot_id: int, name: str, data: bytes):
    return api.post(f"/api/bots/{bot_id}/versions/", {"file": SimpleUploadedFile(name, data)}, format="multipart")


# -- games ------------------------------------------------------------------------


def test_games_lists_both_games_with_options():
    response = f.client().get("/api/games/")
    assert response.status_code == 200
    games = {g["id"]: g for g in response.json()}
    assert set(games) == {"allegory", "allegra"}
    assert games["allegory"]["options"] == {"unique_morals": False}
    assert games["allegra"]["options"] == {}
    for game in games.values():
        assert 2 <= game["min_players"] <= game["max_players"]
        assert game["name"]


# -- bots -----------------------------------------------------------------------------


def test_create_bot_needs_sign_in():
    response = f.client().post("/api/bots/", {"game": "allegra", "name": "anon"}, format="json")
    f.assert_error(response, 401)
    assert not Bot.objects.filter(name="anon").exists()


def test_create_bot(owner):
    response = f.client(owner).post(
        "/api/bots/", {"game": "allegory", "name": "Owl_Hunter-2.0", "description": "bids high"}, format="json"
    )
    assert response.status_code == 201
    body = response.json()
    assert body == {
        "id": body["id"],
        "name": "Owl_Hunter-2.0",
        "game": "allegory",
        "owner": "owner",
        "description": "bids high",
        "builtin": False,
        "current_version": None,
        "withdrawn": False,
        "created": body["created"],
    }
    assert Bot.objects.get(pk=body["id"]).owner == owner


def test_create_bot_duplicate_name_in_the_same_game_is_400(owner, my_bot):
    other = f.user()
    response = f.client(other).post("/api/bots/", {"game": "allegra", "name": "my-bot"}, format="json")
    f.assert_error(response, 400, field="name", contains="there is already an Allegra bot named 'my-bot': choose another name")
    # The same name in the other game is fine.
    assert f.client(other).post("/api/bots/", {"game": "allegory", "name": "my-bot"}, format="json").status_code == 201


def test_create_bot_name_clashing_with_a_builtin_is_400(owner):
    response = f.client(owner).post("/api/bots/", {"game": "allegra", "name": "random"}, format="json")
    f.assert_error(response, 400, field="name")


@pytest.mark.parametrize("name", ["x", "-leading-dash", "has space", "slash/name", "n" * 41, "ünïcode", ""])
def test_create_bot_bad_name_is_400(owner, name):
    response = f.client(owner).post("/api/bots/", {"game": "allegra", "name": name}, format="json")
    f.assert_error(response, 400, field="name")
    assert not Bot.objects.filter(owner=owner).exists()


def test_create_bot_bad_name_message_gives_the_rule(owner):
    response = f.client(owner).post("/api/bots/", {"game": "allegra", "name": "has space"}, format="json")
    f.assert_error(response, 400, field="name", contains="2-40 characters")


@pytest.mark.parametrize("game", ["poker", "", "ALLEGRA"])
def test_create_bot_unknown_game_is_400(owner, game):
    response = f.client(owner).post("/api/bots/", {"game": game, "name": "gamer"}, format="json")
    f.assert_error(response, 400, field="game")


def test_create_bot_unknown_game_message_names_the_game(owner):
    response = f.client(owner).post("/api/bots/", {"game": "poker", "name": "gamer"}, format="json")
    f.assert_error(response, 400, field="game", contains='"poker" is not a valid choice')


def test_create_bot_description_too_long_is_400(owner):
    response = f.client(owner).post(
        "/api/bots/", {"game": "allegra", "name": "wordy", "description": "x" * 2001}, format="json"
    )
    f.assert_error(response, 400, field="description")


# -- a bot with its first version (POST /api/bots/ as multipart) -----------------------------------


def create_with_package(api, name: str, filename: str, data: bytes, game: str = "allegra"):
    return api.post("/api/bots/", {"game": game, "name": name, "file": SimpleUploadedFile(filename, data)}, format="multipart")


def test_create_bot_with_its_first_version(owner):
    data = f.bot_program()
    response = create_with_package(f.client(owner), "lowball", "lowball.py", data)
    assert response.status_code == 201, response.content
    body = response.json()
    bot = Bot.objects.get(game="allegra", name="lowball")
    assert body["id"] == bot.pk and body["owner"] == "owner" and body["current_version"] is None
    version = body["version"]
    assert version["number"] == 1 and version["status"] == "pending" and version["filename"] == "lowball.py"
    assert version["size"] == len(data) and version["validation_log"] == ""
    assert list(bot.versions.values_list("number", flat=True)) == [1]


@pytest.mark.parametrize(
    "filename, data, status, reason",
    [
        ("bot.py", b"", 400, "the file is empty"),
        ("notes.txt", b"print(1)\n", 400, "is not a bot package"),
        ("random.py", f.bot_program(), 400, "the name of Python's standard module 'random'"),
        ("pkg.zip", f.zip_bytes({"main.py": "print(1)\n"}), 400, "no manifest"),
        ("big.py", b"#" * 2000, 413, "the limit is 1000 bytes"),
    ],
    ids=["empty", "not-a-package", "shadows-stdlib", "no-manifest", "too-large"],
)
def test_a_refused_first_version_creates_no_bot(settings, owner, filename, data, status, reason):
    if status == 413:
        settings.CARDROOM_MAX_UPLOAD_BYTES = 1000
    response = create_with_package(f.client(owner), "refused", filename, data)
    f.assert_error(response, status, field="file", contains=reason)
    assert not Bot.objects.filter(name="refused").exists()


def test_a_quota_refusing_the_first_version_creates_no_bot(settings, owner, my_bot):
    settings.CARDROOM_QUOTA_VERSIONS_PER_DAY = 1
    assert upload(f.client(owner), my_bot.pk, "one.py", f.bot_program()).status_code == 201
    f.assert_error(create_with_package(f.client(owner), "over", "over.py", f.bot_program()), 429, contains="versions a day")
    assert not Bot.objects.filter(name="over").exists()


def test_a_taken_name_is_refused_with_a_package_too(owner, my_bot):
    response = create_with_package(f.client(f.user()), "my-bot", "bot.py", f.bot_program())
    f.assert_error(response, 400, field="name", contains="there is already an Allegra bot named 'my-bot'")
    assert Bot.objects.filter(name="my-bot").count() == 1 and not my_bot.versions.exists()


def test_a_file_field_that_is_no_file_is_refused_and_creates_no_bot(owner):
    response = f.client(owner).post("/api/bots/", {"game": "allegra", "name": "texty", "file": "print(1)"}, format="multipart")
    f.assert_error(response, 400, field="file", contains="multipart field 'file'")
    assert not Bot.objects.filter(name="texty").exists()


def test_the_old_ways_of_creating_a_bot_still_answer_as_before(owner):
    for body, fmt in [({"game": "allegra", "name": "plain-json"}, "json"), ({"game": "allegra", "name": "plain-form"}, "multipart")]:
        response = f.client(owner).post("/api/bots/", body, format=fmt)
        assert response.status_code == 201, response.content
        assert "version" not in response.json() and response.json()["current_version"] is None


def test_a_bot_with_its_package_counts_as_an_upload_too(settings, owner):
    f.limit_rate(settings, "upload", "1/hour")
    api = f.client(owner)
    assert create_with_package(api, "first", "first.py", f.bot_program()).status_code == 201
    response = create_with_package(api, "second", "second.py", f.bot_program())
    f.assert_error(response, 429)
    assert "Retry-After" in response and not Bot.objects.filter(name="second").exists()


def test_bot_list_is_public_and_filters_by_game_and_owner(owner, my_bot):
    f.bot(owner, game="allegory", name="owl")
    api = f.client()
    everything = api.get("/api/bots/").json()
    assert everything["count"] == Bot.objects.count()
    names = {(b["game"], b["name"]) for b in everything["results"]}
    assert {("allegra", "my-bot"), ("allegory", "owl"), ("allegra", "random"), ("allegory", "greedy")} <= names
    allegra = api.get("/api/bots/", {"game": "allegra"}).json()["results"]
    assert allegra and {b["game"] for b in allegra} == {"allegra"}
    mine = api.get("/api/bots/", {"owner": "owner"}).json()["results"]
    assert {b["name"] for b in mine} == {"my-bot", "owl"}
    both = api.get("/api/bots/", {"owner": "owner", "game": "allegory"}).json()["results"]
    assert [b["name"] for b in both] == ["owl"]
    assert api.get("/api/bots/", {"owner": "no-such-user"}).json()["results"] == []


@pytest.mark.parametrize("game", ["poker", ""])
def test_bot_list_unknown_game_filter_is_400(game):
    f.assert_error(f.client().get("/api/bots/", {"game": game}), 400, field="game", contains=f"not {game!r}")


def test_bot_list_paginates():
    api = f.client()
    first = api.get("/api/bots/", {"page_size": 2}).json()
    assert len(first["results"]) == 2 and first["next"]
    second = api.get(first["next"]).json()
    assert {b["id"] for b in first["results"]}.isdisjoint(b["id"] for b in second["results"])
    f.assert_error(api.get("/api/bots/", {"page": 999}), 404, contains="invalid page")
    for bad in ("", "x", "-1", "1.0", "last"):
        f.assert_error(api.get("/api/bots/", {"page": bad}), 400, field="page", contains="whole number")


def test_bot_detail_shows_the_current_version(owner, my_bot):
    f.version(my_bot)
    body = f.client().get(f"/api/bots/{my_bot.pk}/").json()
    assert body["name"] == "my-bot" and body["owner"] == "owner" and body["current_version"] == 1


def test_unknown_bot_is_a_json_404():
    f.assert_error(f.client().get("/api/bots/999999/"), 404, contains="not found")
    f.assert_error(f.client().get("/api/bots/999999/versions/"), 404)


def test_bots_cannot_be_renamed_through_the_api(owner, my_bot):
    api = f.client(owner)
    f.assert_error(api.put(f"/api/bots/{my_bot.pk}/", {"name": "renamed"}, format="json"), 405)
    f.assert_error(api.patch(f"/api/bots/{my_bot.pk}/", {"name": "renamed"}, format="json"), 400, contains="description")
    assert Bot.objects.get(pk=my_bot.pk).name == "my-bot"


# -- upload: permissions ---------------------------------------------------------------------


def test_upload_anonymous_is_401(my_bot):
    response = upload(f.client(), my_bot.pk, "bot.py", f.bot_program())
    f.assert_error(response, 401)
    assert not my_bot.versions.exists()


def test_upload_to_another_users_bot_is_403(my_bot):
    intruder = f.user("intruder")
    response = upload(f.client(intruder), my_bot.pk, "bot.py", f.bot_program())
    f.assert_error(response, 403, contains="only the bot's owner")
    assert not my_bot.versions.exists()


def test_upload_to_a_builtin_bot_is_403(owner):
    builtin = Bot.objects.get(game="allegra", name="random")
    f.assert_error(upload(f.client(owner), builtin.pk, "bot.py", f.bot_program()), 403)


def test_upload_to_an_unknown_bot_is_404(owner):
    f.assert_error(upload(f.client(owner), 999999, "bot.py", f.bot_program()), 404)


# -- upload: success ------------------------------------------------------------------------------


def test_upload_py_is_201_pending_and_queues_validation(owner, my_bot, django_capture_on_commit_callbacks):
    data = f.bot_program()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = upload(f.client(owner), my_bot.pk, "my_bot.py", data)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["number"] == 1
    assert body["status"] == "pending"
    assert body["filename"] == "my_bot.py"
    assert body["size"] == len(data)
    assert len(body["sha256"]) == 64
    assert body["activated"] is None
    assert body["validation_log"] == ""
    version = BotVersion.objects.get(pk=body["id"])
    assert version.bot == my_bot and version.status == "pending"
    with version.package.open("rb") as stored:
        assert stored.read() == data
    assert len(callbacks) == 1  # the validation task, sent once the upload is committed


def test_upload_numbers_versions(owner, my_bot):
    api = f.client(owner)
    assert upload(api, my_bot.pk, "a.py", f.bot_program()).json()["number"] == 1
    assert upload(api, my_bot.pk, "b.py", f.bot_program()).json()["number"] == 2


def test_upload_zip_and_tar_gz_packages(owner, my_bot):
    api = f.client(owner)
    response = upload(api, my_bot.pk, "bot.zip", f.zip_package())
    assert response.status_code == 201, response.content
    assert response.json()["filename"] == "bot.zip"
    tar = f.tar_gz_bytes({"mybot/bot.json": '{"entry": "main.py", "protocol": 1}', "mybot/main.py": f.bot_program()})
    response = upload(api, my_bot.pk, "bot.tar.gz", tar)
    assert response.status_code == 201, response.content
    assert response.json()["number"] == 2


def test_upload_keeps_only_the_base_name_of_the_file(owner, my_bot):
    response = upload(f.client(owner), my_bot.pk, "../../etc/evil.py", f.bot_program())
    assert response.status_code == 201
    assert response.json()["filename"] == "evil.py"


def test_upload_oversize_is_not_stored_past_the_limit(settings, owner, my_bot, monkeypatch):
    """The body is read through UploadLimit: an oversize file never reaches
    the handler that would write it to a temporary file."""
    from django.core.files.uploadhandler import TemporaryFileUploadHandler

    settings.CARDROOM_MAX_UPLOAD_BYTES = 1000
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every upload would go to a temporary file
    written = []
    original = TemporaryFileUploadHandler.receive_data_chunk
    monkeypatch.setattr(
        TemporaryFileUploadHandler, "receive_data_chunk", lambda self, data, start: written.append(len(data)) or original(self, data, start)
    )
    response = upload(f.client(owner), my_bot.pk, "big.py", b"#" * 500_000)
    f.assert_error(response, 413, field="file")
    assert sum(written) <= 1000


def test_upload_with_session_auth_and_csrf_token(settings, owner, my_bot):
    """A browser session (the docs page) uploads too: the CSRF check reads
    the body before the view, and the size limit is still in place."""
    from rest_framework.test import APIClient

    settings.CARDROOM_MAX_UPLOAD_BYTES = 1000
    api = APIClient(enforce_csrf_checks=True)
    api.force_login(owner)
    api.cookies["csrftoken"] = "a" * 32
    url = f"/api/bots/{my_bot.pk}/versions/"
    refused = api.post(url, {"file": SimpleUploadedFile("bot.py", b"#" * 10)}, format="multipart")
    f.assert_error(refused, 403, contains="CSRF")
    too_big = api.post(url, {"file": SimpleUploadedFile("bot.py", b"#" * 5000), "csrfmiddlewaretoken": "a" * 32}, format="multipart")
    f.assert_error(too_big, 413)
    program = f.bot_program()
    settings.CARDROOM_MAX_UPLOAD_BYTES = 10_000
    ok = api.post(url, {"file": SimpleUploadedFile("bot.py", program), "csrfmiddlewaretoken": "a" * 32}, format="multipart")
    assert ok.status_code == 201, ok.content


def test_upload_throttled(settings, owner, my_bot):
    f.limit_rate(settings, "upload", "2/hour")
    api = f.client(owner)
    assert upload(api, my_bot.pk, "a.py", f.bot_program()).status_code == 201
    assert upload(api, my_bot.pk, "b.txt", b"refused, but counted").status_code == 400
    response = upload(api, my_bot.pk, "c.py", f.bot_program())
    f.assert_error(response, 429)
    assert "Retry-After" in response
    assert my_bot.versions.count() == 1
    # Reading is never throttled.
    assert api.get(f"/api/bots/{my_bot.pk}/versions/").status_code == 200


# -- upload: errors ------------------------------------------------------------------------------------


def test_upload_without_file_is_400(owner, my_bot):
    api = f.client(owner)
    url = f"/api/bots/{my_bot.pk}/versions/"
    f.assert_error(api.post(url, {}, format="multipart"), 400, field="file", contains="multipart field 'file'")
    f.assert_error(api.post(url, {"file": "just text, not a file"}, format="multipart"), 400, field="file")
    f.assert_error(api.post(url, {"file": "x"}, format="json"), 400, field="file")
    f.assert_error(api.post(url, {"package": SimpleUploadedFile("bot.py", f.bot_program())}, format="multipart"), 400, field="file")
    assert not my_bot.versions.exists()


@pytest.mark.parametrize("name", ["notes.txt", "bot", "bot.exe", "bot.tar"])
def test_upload_not_a_package_is_400(owner, my_bot, name):
    response = upload(f.client(owner), my_bot.pk, name, b"print('hi')\n")
    f.assert_error(response, 400, field="file", contains=f"{name!r} is not a bot package")
    assert not my_bot.versions.exists()


def test_upload_empty_file_is_400(owner, my_bot):
    f.assert_error(upload(f.client(owner), my_bot.pk, "bot.py", b""), 400, field="file", contains="the file is empty")


@pytest.mark.parametrize("size", [1001, 5000, 300_000])
def test_upload_oversize_is_413_with_the_limit(settings, owner, my_bot, size):
    settings.CARDROOM_MAX_UPLOAD_BYTES = 1000
    response = upload(f.client(owner), my_bot.pk, "big.py", b"#" * size)
    body = f.assert_error(response, 413, field="file")
    assert body["error"].startswith("big.py: ") and "the limit is 1000 bytes" in body["error"]
    assert not my_bot.versions.exists()
    # Right at the limit is fine.
    program = f.bot_program()
    settings.CARDROOM_MAX_UPLOAD_BYTES = len(program)
    assert upload(f.client(owner), my_bot.pk, "exact.py", program).status_code == 201


@pytest.mark.parametrize(
    "files, reason",
    [
        ({"main.py": "print(1)\n"}, "no manifest: add cardroom.toml (or bot.json)"),
        ({"cardroom.toml": 'entry = "main.py"\nprotocol = 1\n', "../evil.py": "x"}, "'..' is not allowed in a path"),
        ({"cardroom.toml": 'entry = "main.py"\nprotocol = 1\n', "/abs/evil.py": "x"}, "absolute paths are not allowed"),
        ({"cardroom.toml": 'entry = "other.py"\nprotocol = 1\n', "main.py": "x"}, "entry point 'other.py' (from cardroom.toml) is not in the package"),
        ({"cardroom.toml": 'entry = "main.py"\nprotocol = 2\n', "main.py": "x"}, "protocol 2 is not supported"),
        ({"cardroom.toml": 'protocol = 1\n', "main.py": "x"}, "missing required key 'entry'"),
        ({"cardroom.toml": 'entry = "main.py"\nprotocol = 1\ncolour = "red"\n', "main.py": "x"}, "unknown key 'colour'"),
        ({"cardroom.toml": "entry = = oops", "main.py": "x"}, "cardroom.toml: invalid TOML"),
        ({"cardroom.toml": 'entry = "../main.py"\nprotocol = 1\n', "main.py": "x"}, "must be a relative path inside the package"),
    ],
    ids=["no-manifest", "traversal", "absolute", "missing-entry", "protocol", "no-entry-key", "unknown-key", "bad-toml", "entry-traversal"],
)
def test_upload_bad_zip_is_400_with_the_precise_reason(owner, my_bot, files, reason):
    response = upload(f.client(owner), my_bot.pk, "pkg.zip", f.zip_bytes(files))
    body = f.assert_error(response, 400, field="file", contains=reason)
    assert body["error"].startswith("pkg.zip: ")
    assert not my_bot.versions.exists()


def test_upload_named_like_a_standard_module_is_400_before_it_can_crash(owner, my_bot):
    """random.py would import itself for `import random` and crash at its
    first move: the upload says so instead, naming the file."""
    response = upload(f.client(owner), my_bot.pk, "random.py", f.bot_program())
    body = f.assert_error(response, 400, field="file", contains="the name of Python's standard module 'random'")
    assert body["error"].startswith("random.py: ")
    assert not my_bot.versions.exists()
    assert upload(f.client(owner), my_bot.pk, "random_player.py", f.bot_program()).status_code == 201


@pytest.mark.parametrize("name", ["bad\x00name.py", "tab\tname.py"])
def test_a_control_character_in_a_package_name_is_a_clear_error(name):
    """(Django's upload parser strips them already; the service does not rely on it.)"""
    from ladder.services.bots import check_package
    from ladder.services.errors import ServiceError

    with pytest.raises(ServiceError, match="must not contain control characters"):
        check_package(name, f.bot_program())


def test_upload_corrupt_zip_is_400(owner, my_bot):
    response = upload(f.client(owner), my_bot.pk, "pkg.zip", b"PK\x03\x04 this is not really a zip")
    f.assert_error(response, 400, field="file", contains="not a valid zip archive")


def test_upload_tar_gz_with_traversal_is_400(owner, my_bot):
    tar = f.tar_gz_bytes({"cardroom.toml": f.manifest(), "main.py": "x", "../../evil.py": "x"})
    f.assert_error(upload(f.client(owner), my_bot.pk, "pkg.tar.gz", tar), 400, field="file", contains="'..' is not allowed")


def test_upload_corrupt_tar_gz_is_400(owner, my_bot):
    f.assert_error(upload(f.client(owner), my_bot.pk, "pkg.tgz", b"\x1f\x8b garbage"), 400, field="file")


def test_upload_duplicate_package_is_409(owner, my_bot):
    api = f.client(owner)
    data = f.bot_program()
    assert upload(api, my_bot.pk, "first.py", data).status_code == 201
    response = upload(api, my_bot.pk, "second.py", data)
    f.assert_error(response, 409, field="file", contains="already version 1 of my-bot")
    assert my_bot.versions.count() == 1
    # A failed version does not block the same package again.
    my_bot.versions.update(status="failed")
    assert upload(api, my_bot.pk, "again.py", data).status_code == 201


def test_upload_same_package_to_another_bot_is_fine(owner, my_bot):
    other = f.bot(owner, name="my-other-bot")
    data = f.bot_program()
    assert upload(f.client(owner), my_bot.pk, "bot.py", data).status_code == 201
    assert upload(f.client(owner), other.pk, "bot.py", data).status_code == 201


def test_upload_file_name_too_long_is_400(owner, my_bot):
    response = upload(f.client(owner), my_bot.pk, "b" * 210 + ".py", f.bot_program())
    f.assert_error(response, 400, field="file", contains="at most 200 characters")
    assert not my_bot.versions.exists()


# -- version list ----------------------------------------------------------------------------------------


def test_version_list_shows_the_validation_log_to_the_owner_only(owner, my_bot):
    first = f.version(my_bot)
    second = f.version(my_bot, activate=False)
    BotVersion.objects.filter(pk=second.pk).update(status="failed", validation_log="seat 1 crashed: Traceback ...")
    url = f"/api/bots/{my_bot.pk}/versions/"

    mine = f.client(owner).get(url).json()["results"]
    assert [v["number"] for v in mine] == [2, 1]
    assert mine[0]["status"] == "failed" and mine[0]["validation_log"] == "seat 1 crashed: Traceback ..."
    assert mine[1]["status"] == "active" and mine[1]["activated"] is not None
    assert mine[1]["id"] == first.pk

    for other in (f.client(f.user()), f.client()):
        theirs = other.get(url).json()["results"]
        assert [v["number"] for v in theirs] == [2, 1]
        assert all(v["validation_log"] is None for v in theirs)
        assert theirs[0]["status"] == "failed"


def test_version_list_of_another_bot_is_separate(owner, my_bot):
    f.version(my_bot)
    other = f.bot(owner, name="empty-bot")
    assert f.client().get(f"/api/bots/{other.pk}/versions/").json()["results"] == []
