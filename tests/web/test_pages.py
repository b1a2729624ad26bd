"""The pages through Django's test client: what each shows, who may see
what, and that the busy pages run a bounded number of queries."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from ladder.models import Bot, BotVersion, Match, Rating
from ladder.services.bots import check_package
from ladder.services.errors import ServiceError
from tests.web import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def allegra():
    return f.league("allegra", 2, matches=8, seed=3)


def _client(user=None) -> Client:
    c = Client()
    if user is not None:
        c.force_login(user)
    return c


def test_every_page_renders(allegra):
    match = allegra["matches"][0]
    bot = allegra["bots"][2]
    c = _client()
    for url in [
        "/", reverse("web-ladder", args=[allegra["ladder"].pk]), reverse("web-bot", args=[bot.pk]),
        reverse("web-match", args=[match.pk]), reverse("web-matches"), f"{reverse('web-matches')}?bot={bot.pk}",
        reverse("web-rules", args=["allegory"]), reverse("web-rules", args=["allegra"]),
        reverse("login"), reverse("web-signup"),
    ]:  # fmt: skip
        response = c.get(url)
        assert response.status_code == 200, url
    assert c.get("/no/such/page/").status_code == 404
    assert c.get(reverse("web-bot", args=[999999])).status_code == 404
    assert c.get(reverse("web-rules", args=["poker"])).status_code == 404


def test_home_counts_and_ladders(allegra):
    html = _client().get("/").content.decode()
    assert f'data-count="bots">{Bot.objects.count()}<' in html
    assert 'data-count="today">8<' in html
    assert 'data-count="queued">0<' in html
    assert allegra["ladder"].name in html
    assert "The full rules of Allegory" in html and "The full rules of Allegra" in html


def test_ladder_page_states_its_time_control(allegra):
    """Per move and the overage bank, as the timeout messages name them."""
    ladder = allegra["ladder"]
    ladder.per_move_ms, ladder.overage_ms, ladder.total_ms = 1000, 1981, 120_000
    ladder.save()
    html = _client().get(reverse("web-ladder", args=[ladder.pk])).content.decode()
    assert "1000 ms per move plus a 1981 ms overage bank, 120 s in all per bot per match" in html


def test_leaderboard_orders_sorts_and_pages(allegra, monkeypatch):
    from ladder.selectors import pages as selectors

    ladder = allegra["ladder"]
    url = reverse("web-ladder", args=[ladder.pk])
    by_elo = list(selectors.ranked(ladder).values_list("bot__name", flat=True))
    page = _client().get(url)
    rows = page.context["page"].rows
    assert [r.bot.name for r in rows] == by_elo
    assert [r.position for r in rows] == list(range(1, len(by_elo) + 1))
    by_games = _client().get(url + "?sort=games&dir=desc").context["page"].rows
    assert [r.games for r in by_games] == sorted((r.games for r in by_games), reverse=True)
    # the rank column stays the Elo rank whatever the sort
    assert {r.bot.name: r.position for r in by_games} == {n: i + 1 for i, n in enumerate(by_elo)}
    monkeypatch.setattr(selectors, "PAGE_SIZE", 2)
    second = _client().get(url + "?page=2").context["page"]
    assert [r.bot.name for r in second.rows] == by_elo[2:4]
    assert second.pages == -(-len(by_elo) // 2)
    partial = _client().get(url + "?page=2&partial=1")
    assert b"<html" not in partial.content and b"data-testid=\"standings\"" in partial.content


def test_bounded_queries(allegra, django_assert_max_num_queries):
    bot = allegra["bots"][2]
    with django_assert_max_num_queries(12):
        _client().get(reverse("web-ladder", args=[allegra["ladder"].pk]))
    with django_assert_max_num_queries(16):
        _client().get(reverse("web-bot", args=[bot.pk]))
    with django_assert_max_num_queries(10):
        _client().get(reverse("web-match", args=[allegra["matches"][0].pk]))


def test_bot_page_chart_and_head_to_head(allegra):
    bot = allegra["bots"][2]
    response = _client().get(reverse("web-bot", args=[bot.pk]))
    html = response.content.decode()
    rating = Rating.objects.get(bot=bot, ladder=allegra["ladder"])
    assert '<svg class="chart"' in html
    assert f'data-points="{rating.games}"' in html
    h2h = response.context["h2h"]
    assert sum(o["games"] for o in h2h) == rating.games  # 2-player: one opponent per game
    for o in h2h:
        assert o["ahead"] + o["level"] + o["behind"] == o["games"]


def test_match_page_shows_result_and_log_links_only_to_owners(allegra):
    owner = allegra["owner"]
    match = next(m for m in allegra["matches"] if any(p.bot.owner_id == owner.pk for p in m.participants.all()))
    mine = [p for p in match.participants.all() if p.bot.owner_id == owner.pk]
    others = [p for p in match.participants.all() if p.bot.owner_id != owner.pk]
    public = _client().get(reverse("web-match", args=[match.pk])).content.decode()
    assert "data-testid=\"log-link\"" not in public
    assert f'/api/matches/{match.pk}/replay/' in public
    for p in match.participants.all():
        assert f'data-score="{p.score}"' in public
    as_owner = _client(owner).get(reverse("web-match", args=[match.pk])).content.decode()
    for p in mine:
        assert reverse("web-match-log", args=[match.pk, p.seat]) in as_owner
    for p in others:
        assert reverse("web-match-log", args=[match.pk, p.seat]) not in as_owner
    log_url = reverse("web-match-log", args=[match.pk, mine[0].seat])
    page = _client(owner).get(log_url)
    assert page.status_code == 200 and f"{mine[0].bot.name}: starting" in page.content.decode()
    raw = _client(owner).get(log_url + "?raw=1")
    assert raw["Content-Type"].startswith("text/plain") and raw.content.startswith(f"{mine[0].bot.name}: starting".encode())
    assert _client(f.user()).get(log_url).status_code == 403
    assert _client().get(log_url).status_code == 302


def test_frames_endpoint(allegra):
    match = allegra["matches"][0]
    url = reverse("web-match-frames", args=[match.pk])
    c = _client()
    response = c.get(url + "?view=seat-1", HTTP_ACCEPT_ENCODING="gzip")
    assert response["Content-Encoding"] == "gzip"
    doc = json.loads(gzip.decompress(response.content))
    assert doc["view"] == "seat-1" and len(doc["frames"]) == match.num_events
    plain = json.loads(c.get(url).content)
    assert plain["view"] == "full" and plain["frames"][-1]["obs"]["scores"] == [
        p.score for p in match.participants.order_by("seat")
    ]
    assert c.get(url + "?view=seat-9").status_code == 400
    queued = f.ladder("allegra", 2)
    from ladder.services.matches import create_match

    waiting = create_match(ladder=queued, versions=[allegra["bots"][0].current_version, allegra["bots"][1].current_version])
    assert c.get(reverse("web-match-frames", args=[waiting.pk])).status_code == 404
    assert "waiting to be played" in c.get(reverse("web-match", args=[waiting.pk])).content.decode()


def test_signup_account_token_and_bot_creation():
    c = _client()
    response = c.post(reverse("web-signup"), {"username": "newcomer", "password1": "A-long-pass-1234", "password2": "A-long-pass-1234"})
    assert response.status_code == 302 and response["Location"] == reverse("web-my-bots")
    account = c.get(reverse("web-account")).content.decode()
    token = Token.objects.get(user__username="newcomer").key
    assert token in account
    c.post(reverse("web-account"), {"action": "regenerate"})
    assert Token.objects.get(user__username="newcomer").key != token
    bad = c.post(reverse("web-my-bots"), {"game": "allegra", "name": "x", "description": ""})
    assert "a bot name is 2-40 characters" in bad.content.decode()
    ok = c.post(reverse("web-my-bots"), {"game": "allegra", "name": "fresh-bot", "description": "hi"})
    assert ok.status_code == 302
    dup = c.post(reverse("web-my-bots"), {"game": "allegra", "name": "fresh-bot", "description": ""})
    assert "there is already an Allegra bot named &#x27;fresh-bot&#x27;: choose another name" in dup.content.decode()


def test_upload_errors_are_shown_exactly():
    owner = f.user()
    bot = f.active_bot(owner, "allegra", "uploader", "random")
    c = _client(owner)
    url = reverse("web-my-bot", args=[bot.pk])
    from django.core.files.uploadedfile import SimpleUploadedFile

    data = b"just some notes\n"
    try:
        check_package("notes.txt", data)
    except ServiceError as exc:
        expected = exc.message
    response = c.post(url, {"file": SimpleUploadedFile("notes.txt", data)})
    assert response.status_code == 200
    assert response.context["upload_error"] == expected
    assert expected.replace("'", "&#x27;") in response.content.decode()
    same = bot.current_version.package.open("rb").read()
    dup = c.post(url, {"file": SimpleUploadedFile("again.py", same)})
    assert "this exact package is already version 1 of uploader" in dup.context["upload_error"]
    assert BotVersion.objects.filter(bot=bot).count() == 1
    # someone else's bot is not yours to manage
    assert _client(f.user()).get(url).status_code == 404
    assert Match.objects.count() == 0
