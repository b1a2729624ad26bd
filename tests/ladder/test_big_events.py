"""A big event is cheap to read (issue 36, finding 3): at 1,000 entries the
event's page, its API answer (entries paged) and its archive cost a number
of queries that does not grow with the field, an anonymous request with a
random parameter is a cache hit (no query at all), a signed-in visitor gets
the cached public part with their own entry state, and a result makes every
one of them show it."""

from __future__ import annotations

import io
import json
import secrets
import zipfile
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ladder.models import Bot, BotVersion, Match, Participant, Tournament
from ladder.services import matches as match_services
from ladder.services import tournaments
from tests.ladder import factories

pytestmark = pytest.mark.django_db

FIELD = 1000


def staff():
    user = factories.user()
    user.is_staff = True
    user.save()
    return user


def field_of(n: int, owners: list) -> list[Bot]:
    """``n`` Allegra bots with an active version each, made in bulk (the
    event reads them, never runs them), owned in turn by ``owners``."""
    tag = secrets.token_hex(3)
    bots = Bot.objects.bulk_create(Bot(owner=owners[i % len(owners)], game="allegra", name=f"big-{tag}-{i:04d}") for i in range(n))
    versions = BotVersion.objects.bulk_create(
        BotVersion(bot=b, number=1, filename="bot.py", sha256="0" * 64, size=1, status=BotVersion.Status.ACTIVE) for b in bots
    )
    for b, v in zip(bots, versions):
        b.current_version = v
    Bot.objects.bulk_update(bots, ["current_version"])
    return bots


def finished_event(n: int = FIELD) -> Tournament:
    """A round-robin of ``n`` entries at tables of 2, one round (n/2
    matches), every match finished (seat 0 ahead) and its final table stored."""
    t = tournaments.create_tournament(user=staff(), name=f"big {secrets.token_hex(3)}", game="allegra", format="round-robin",
                                      bots=field_of(n, [factories.user()]), table_size=2, rounds=1, seed=5)  # fmt: skip
    matches = Match.objects.filter(tournament_slot__tournament=t)
    Participant.objects.filter(match__in=matches, seat=0).update(rank=1, score=0)
    Participant.objects.filter(match__in=matches, seat=1).update(rank=2, score=10)
    done = matches.update(status=Match.Status.FINISHED, finished=timezone.now())
    Tournament.objects.filter(pk=t.pk).update(results_recorded=done, status=Tournament.Status.FINISHED, finished=timezone.now())
    tournaments.refresh_standings(t.pk, force=True)
    t.refresh_from_db()
    return t


def queries_of(client, url: str, **headers):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **headers)
    assert response.status_code in (200, 304), (url, response.status_code, response.content[:300])
    return response, [q["sql"] for q in captured.captured_queries]


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.fixture
def big():
    factories.clear_caches()
    return finished_event()


def test_a_big_events_page_is_a_bounded_number_of_queries_and_a_cache_hit_whatever_the_parameters(big):
    t = big
    url = f"/tournaments/{t.pk}/"
    visitor = Client()
    first, sql = queries_of(visitor, url)
    html = first.content.decode()
    # a page of the standings (first place first) and of the field, not 1,000 rows of each
    assert html.count('href="/bots/') < 3 * 200 and "page 1 of 10" in html
    assert len(sql) <= 12, sql  # not one a row
    # A random parameter is the same page, from the cache: no query at all.
    again, sql = queries_of(visitor, f"{url}?utm={secrets.token_hex(8)}&_={secrets.token_hex(8)}")
    assert sql == [] and again.content == first.content
    assert "utm" not in again.content.decode()
    # A page parameter of no page is the first page: its public part from the cache too.
    odd, sql = queries_of(visitor, f"{url}?page=1x")
    assert len(sql) == 1 and odd.content == first.content  # (the event's row)
    # The standings' second page: the places that follow, and links that keep the other pages.
    second = visitor.get(f"{url}?standings=2&field=3").content.decode()
    assert "page 2 of 10" in second and "?field=3&amp;standings=3#standings-h" in second
    # The live refresh of that page asks for the same standings page.
    assert f'data-refresh-url="{url}?partial=1&amp;standings=2"' in second
    # A signed-in visitor: the public part from the cache, their own header around it.
    person = factories.user()
    signed_in = Client()
    signed_in.force_login(person)
    mine, sql = queries_of(signed_in, f"{url}?x={secrets.token_hex(4)}")
    assert person.username in mine.content.decode() and "event-standings" in mine.content.decode()
    assert len(sql) <= 6, sql  # session, user, the event (and no row of the field)


def test_a_big_events_api_answer_is_paged_and_a_cache_hit(big):
    t = big
    anyone = factories.client()
    detail, sql = queries_of(anyone, f"/api/tournaments/{t.pk}/")
    assert len(sql) <= 6, sql
    data = detail.json()
    assert data["entries_count"] == FIELD and len(data["entries"]) == 200 and data["progress"]["played"] == FIELD // 2
    # every entry, once each, in entry order, by following the links
    seen, following = [e["entry"] for e in data["entries"]], data["entries_next"]
    while following:
        page, sql = queries_of(anyone, following)
        assert len(sql) <= 4, sql
        seen += [e["entry"] for e in page.json()["results"]]
        following = page.json()["next"]
    assert seen == list(range(FIELD))
    names = {e["entry"]: e["name"] for e in anyone.get(f"/api/tournaments/{t.pk}/entries/?page=3&page_size=100").json()["results"]}
    assert list(names) == list(range(200, 300))
    assert names[250] == t.entries.get(index=250).bot.name
    # cache-busting parameters: the same answers, from the cache
    for url in (f"/api/tournaments/{t.pk}/", f"/api/tournaments/{t.pk}/entries/?page=2", f"/api/tournaments/{t.pk}/standings/"):
        warm = anyone.get(url)
        hit, sql = queries_of(anyone, f"{url}{'&' if '?' in url else '?'}nocache={secrets.token_hex(8)}")
        assert sql == [] and hit.content == warm.content, url
    # Signed in (a token), with a junk parameter: the same answers, kept rendered (no query of the field), no junk in their links.
    member = factories.client(factories.user())
    for url in (f"/api/tournaments/{t.pk}/", f"/api/tournaments/{t.pk}/entries/?page=2&page_size=200"):
        answer, sql = queries_of(member, f"{url}{'&' if '?' in url else '?'}junk=1")
        assert answer.content == anyone.get(url).content and b"junk" not in answer.content, url
        assert len(sql) <= 3, sql  # the token, its user, the event
    # bad pages are a 4xx naming the parameter, not a 500
    factories.assert_error(anyone.get(f"/api/tournaments/{t.pk}/entries/?page=abc"), 400, contains="page")
    factories.assert_error(anyone.get(f"/api/tournaments/{t.pk}/entries/?page_size=0"), 400, contains="page_size")
    assert anyone.get(f"/api/tournaments/{t.pk}/entries/?page=999").status_code == 404
    # a small field's answer holds every entry, as it always did
    small = finished_event(4)
    data = anyone.get(f"/api/tournaments/{small.pk}/").json()
    assert [e["entry"] for e in data["entries"]] == [0, 1, 2, 3] and data["entries_count"] == 4 and data["entries_next"] is None


def test_a_big_events_archive_is_built_once_and_then_sent_as_stored(big):
    t = big
    url = f"/tournaments/{t.pk}/archive.zip"
    visitor = Client()
    built, _ = queries_of(visitor, url)
    data = body(built)
    saved = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("standings.json"))
    assert len(saved["entries"]) == FIELD and len(saved["matches"]) == FIELD // 2 and len(saved["standings"]) == FIELD
    assert built["Content-Disposition"] == f'attachment; filename="cardroom-event-{t.pk}.zip"' and built["ETag"]
    # again, with a random parameter: the stored file, for the event's row alone
    again, sql = queries_of(visitor, f"{url}?r={secrets.token_hex(6)}")
    assert body(again) == data and len(sql) <= 1, sql
    assert queries_of(visitor, url, HTTP_IF_NONE_MATCH=built["ETag"])[0].status_code == 304
    # A write that bumps the public reads: the fingerprint is read again (a
    # few queries), and, nothing the archive holds having changed, the same file is sent.
    factories.ladder("allegra", 2)
    from ladder import caching

    caching.bump(caching.MATCHES)
    same, sql = queries_of(visitor, url)
    assert body(same) == data and len(sql) <= 6, sql
    # A bot of the field renamed: a new archive with the new name.
    bot = t.entries.get(index=7).bot
    bot.name = "renamed-seven"
    bot.save()
    renamed = json.loads(zipfile.ZipFile(io.BytesIO(body(visitor.get(url)))).read("standings.json"))
    assert renamed["entries"][7]["name"] == "renamed-seven"


def test_a_signed_in_visitor_sees_their_own_entry_on_a_big_open_event():
    factories.clear_caches()
    alice, crowd = factories.user(), factories.user()
    field = field_of(FIELD, [crowd] * 9 + [alice])  # alice owns every tenth
    t = tournaments.create_tournament(user=staff(), name="big open", game="allegra", format="round-robin", bots=field,
                                      table_size=2, starts=timezone.now() + timedelta(hours=1), entries_per_user=20)  # fmt: skip
    url = f"/tournaments/{t.pk}/"
    anonymous = Client().get(url).content.decode()
    assert "Sign in" in anonymous and "entry-withdraw" not in anonymous
    for person, entries in ((alice, FIELD // 10), (crowd, FIELD - FIELD // 10)):
        client = Client()
        client.force_login(person)
        page, sql = queries_of(client, url)
        html = page.content.decode()
        # their own entries, each with its withdraw form (not anyone else's), and the cached field table beside them
        assert html.count('data-testid="entry-withdraw"') == entries and html.count("Your entry:") == entries
        own = {b.name for b in field if b.owner_id == person.pk}
        assert all(f"<strong>{name} v1</strong>" in html for name in list(own)[:5])
        assert 'data-testid="event-entries"' in html and "page 1 of 10" in html
        assert len(sql) <= 10, sql  # not a query an entry
    # Alice withdraws one: her page and everyone's field table show it at once.
    withdrawn = next(b for b in field if b.owner_id == alice.pk)
    tournaments.withdraw(t, alice, withdrawn)
    client = Client()
    client.force_login(alice)
    html = client.get(url).content.decode()
    assert html.count('data-testid="entry-withdraw"') == FIELD // 10 - 1
    assert Client().get(f"{url}?field=10&junk=1").content.decode().count('href="/bots/') == 99


def test_a_result_shows_at_once_on_the_cached_page_api_and_entries(settings, django_capture_on_commit_callbacks):
    """Correctness first: a page served from the cache never shows the
    standings from before a result once it is recorded."""
    factories.clear_caches()
    field = [BotVersion.objects.get(bot__game="allegory", bot__name=n, status="active").bot for n in ("greedy", "random")]
    t = tournaments.create_tournament(user=staff(), name="small cup", game="allegory", format="round-robin", bots=field, table_size=2, deals=2, seed=3)
    url = f"/tournaments/{t.pk}/?junk={secrets.token_hex(4)}"
    visitor, anyone = Client(), factories.client()
    assert "0 of 2" in visitor.get(url).content.decode()
    assert anyone.get(f"/api/tournaments/{t.pk}/?x=1").json()["progress"]["played"] == 0
    live = visitor.get(f"/tournaments/{t.pk}/?partial=1").content.decode()
    assert "0 of 2" in live
    settings.CARDROOM_STANDINGS_REFRESH_SECONDS = 0
    match_id = Match.objects.filter(tournament_slot__tournament=t).order_by("id").values_list("pk", flat=True).first()
    with django_capture_on_commit_callbacks(execute=True):
        assert match_services.run_queued_match(match_id, "test-worker") == "finished"
    page = visitor.get(url).content.decode()
    assert "1 of 2" in page
    assert ">1</td>" in page  # a standings row counts its game
    assert "1 of 2" in visitor.get(f"/tournaments/{t.pk}/?partial=1").content.decode()
    assert anyone.get(f"/api/tournaments/{t.pk}/?x=2").json()["progress"]["played"] == 1
    standings = anyone.get(f"/api/tournaments/{t.pk}/standings/?y=3").json()
    assert standings["matches_played"] == 1
