"""Fast public reads: standings, ladder pages, match lists and match pages
(web and API) served from the shared cache (Django's cache framework; Redis
in production), with ETag and Last-Modified so that a client's conditional
GET is answered 304.

Invalidation is by generation, not by deleting keys: each kind of data has a
generation key (``SCOPES``), every cached entry holds the generations it
was built from and is served only while they are current, and a write bumps
the generations it changes (at once, and again on commit). After a bump no
request is answered from the old entries; they are replaced or expire on their own
(CARDROOM_PUBLIC_CACHE_SECONDS, which also bounds how stale a write that
bumps nothing can leave a page). Who bumps what:

* ``matches``: every save or delete of a match (queued, claimed, finished,
  failed, re-queued: post_save below) and ``cancel`` (an UPDATE);
* ``ratings``: a recorded result (the result-recording service: its ratings
  are bulk updates, which send no signal), a bot saved (activation changes
  which bots stand on a ladder), a rating saved or deleted one by one (a
  recompute saves each rating it corrects).

* ``people``: an account deleted (ladder.services.accounts): its name
  leaves every page and replay.

A finished match's replay (``api-replay``) is cached the same way, per
encoding, with the view's own ETag and immutable headers, and never
invalidated: it never changes. Except a casual match's, which names its
person: that name becomes a tombstone if the account is deleted, so such a
replay is never sent as immutable, nor kept here; the view keeps it under
the ``people`` generation (``cached_replay``, decision 191).

A GET's query is cut down to the page's own parameters (sorted) before
anything else: a parameter the page does not know changes nothing it shows,
so ``?x=<random>`` is the same entry as the bare page, and a miss is built
from the cut-down request (nothing unknown reaches the view, so none is
copied into another client's pagination links), rather than every random
parameter costing a rendering and filling the cache (decision 198). A page
parameter given twice, or DRF's ``format`` override, goes to the view as it
came, and so does a NUL byte (the request checks refuse it). Only the
shared page is cached, for who sees the same page as
everyone: requests without an Authorization
header; on the API, asking for JSON with no media-type parameter but q
(``indent=8`` is one client's choice); web pages without a session or
messages cookie (an anonymous visitor). Anything else goes to the view as
before. When the cache is down, reads go to the database (logged).

In front of all this, the proxy keeps each shared page for
CARDROOM_PROXY_CACHE_SECONDS (1 s; ``X-Accel-Expires``, which only nginx
reads): a popular page then costs the app one request a second however many
ask, at the price of being up to that long behind a write.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import DisallowedHost
from django.db import transaction
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import Resolver404, resolve
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import http_date

log = logging.getLogger(__name__)
T = TypeVar("T")

MATCHES = "matches"
RATINGS = "ratings"
PEOPLE = "people"
SCOPES = (MATCHES, RATINGS, PEOPLE)

API, WEB = "api", "web"

# url name -> (who may share the page, the data it shows, its own query parameters)
PUBLIC_READS: dict[str, tuple[str, tuple[str, ...], frozenset[str]]] = {
    "api-standings": (API, (RATINGS,), frozenset({"page", "page_size"})),
    "api-matches": (API, (MATCHES,), frozenset({"ladder", "bot", "status", "cursor", "page_size"})),
    "api-match": (API, (MATCHES,), frozenset()),
    "web-ladder": (WEB, (RATINGS, MATCHES), frozenset({"sort", "dir", "page", "partial"})),
    "web-matches": (WEB, (MATCHES,), frozenset({"before", "ladder", "bot"})),
    "web-match": (WEB, (MATCHES,), frozenset()),
    # An event's standings are stored as its results come in (ladder.services.tournaments),
    # which bumps ``matches``; its progress is matches' too.
    "api-tournament-standings": (API, (MATCHES,), frozenset({"crosstable_page"})),
    # An event, its entries (names: a bot or account renamed is ``ratings``') and its page.
    "api-tournament": (API, (MATCHES, RATINGS), frozenset()),
    "api-tournament-entries": (API, (MATCHES, RATINGS), frozenset({"page", "page_size"})),
    "web-tournament": (WEB, (MATCHES, RATINGS), frozenset({"page", "standings", "field", "partial"})),
    # Immutable (no scope): kept with the view's own ETag and long cache
    # headers, one entry per encoding (gzip or not, as the view answers).
    "api-replay": (API, (), frozenset()),
}

# Response headers not kept with an entry (set afresh per response, or per
# client). Everything else is kept, the security headers the inner
# middleware added included (CSP, nosniff, Referrer-Policy, X-Frame-Options,
# HSTS on HTTPS): a hit is answered before that middleware runs.
_UNSTORED_HEADERS = {"set-cookie", "date", "etag", "last-modified", "cache-control", "content-length"}
# Shared caches may keep a page, but must ask again each time (ETag makes that cheap).
PUBLIC_CACHE_CONTROL = "public, max-age=0, must-revalidate"
# An entry this long or longer is kept gzipped too (nginx's gzip_min_length):
# compressed once when it is stored, not by the proxy for every client.
GZIP_MIN_BYTES = 1024


def accepts_gzip(request: HttpRequest) -> bool:
    """Does the client take ``Content-Encoding: gzip``? (``gzip;q=0`` says no.)"""
    for coding in request.headers.get("Accept-Encoding", "").split(","):
        name, _, params = coding.partition(";")
        if name.strip().lower() in ("gzip", "x-gzip"):
            q = params.strip().lower()
            try:
                return not q.startswith("q=") or float(q[2:]) > 0
            except ValueError:
                return True
    return False


def _gen_key(scope: str) -> str:
    return f"public:gen:{scope}"


def _fresh_generations(scopes: tuple[str, ...], found: dict) -> tuple[str, ...]:
    """The current generation of each scope, from ``found`` (the gen keys
    read). A missing one (never bumped, or evicted) gets a fresh value:
    never one an old entry was built from."""
    out = []
    for scope in scopes:
        value = found.get(_gen_key(scope))
        if value is None:
            cache.add(_gen_key(scope), time.time_ns(), timeout=None)
            value = cache.get(_gen_key(scope))
        out.append(str(value))
    return tuple(out)


def bump_now(*scopes: str) -> None:
    try:
        # A fresh value rather than INCR: never repeats, even after eviction.
        cache.set_many({_gen_key(s): time.time_ns() for s in scopes}, timeout=None)
    except Exception:
        # The write stands (it is committed); cached pages stay stale for at
        # most CARDROOM_PUBLIC_CACHE_SECONDS.
        log.exception("could not invalidate cached public reads", extra={"scopes": ",".join(scopes)})


def bump(*scopes: str) -> None:
    """Invalidate the cached reads of ``scopes`` now and, inside a
    transaction, again once it commits: a reader between the two may have
    cached the data from before the commit under the first new generation."""
    bump_now(*scopes)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: bump_now(*scopes))


def cached_part(name: str, scopes: tuple[str, ...], build: Callable[[], T]) -> T:
    """A part of a page that every visitor sees alike (signed in or not),
    kept as the public reads are: read with the generations of ``scopes``
    in one round trip, built afresh once one of them is bumped. So a page
    that must be rendered for each signed-in visitor costs their small
    personal part, not the whole page (decision 200). When the cache is
    down, built every time."""
    key = f"public:part:{hashlib.blake2b(name.encode(), digest_size=16).hexdigest()}"
    try:
        found = cache.get_many([*(_gen_key(s) for s in scopes), key])
        gens = _fresh_generations(scopes, found)
    except Exception:
        log.warning("the cache is unavailable: a page's public part is built afresh", exc_info=True)
        return build()
    entry = found.get(key)
    if entry is not None and entry[0] == gens:
        return entry[1]
    value = build()
    try:
        cache.set(key, (gens, value), settings.CARDROOM_PUBLIC_CACHE_SECONDS)
    except Exception:
        log.warning("could not cache a page's public part", exc_info=True)
    return value


# -- the middleware -------------------------------------------------------------------


def _plain_accept(accept: str) -> bool:
    """An Accept header that chooses no variant: media ranges with at most a
    q weight. DRF's JSON renderer takes parameters (``application/json;
    indent=8``): such an answer is that client's, never the shared page."""
    for media_range in accept.split(","):
        for param in media_range.split(";")[1:]:
            if param.split("=", 1)[0].strip().lower() != "q":
                return False
    return "text/html" not in accept


def cut_query(request: HttpRequest, params: frozenset[str]) -> bool:
    """Cut the request's query down to the page's own parameters, sorted
    (what the view reads: it ignores the rest). False, the request left as
    it came, for one the shared page does not answer: a parameter of the
    page given twice (the view reads the last), DRF's ``format``, or a NUL
    byte anywhere (refused with a 400 by ladder.request_checks, which must
    see it)."""
    from ladder.request_checks import nul_parameter

    query = request.GET
    if "format" in query or any(len(query.getlist(name)) > 1 for name in params) or nul_parameter(request) is not None:
        return False
    kept = QueryDict(mutable=True)
    for name in sorted(params & set(query)):
        kept[name] = query[name]
    canonical = kept.urlencode()
    if canonical != request.META.get("QUERY_STRING", ""):
        request.META["QUERY_STRING"] = canonical
        kept._mutable = False
        request.GET = kept
    return True


def _shared_page(request: HttpRequest, who: str) -> bool:
    if "HTTP_AUTHORIZATION" in request.META:
        return False  # (refused with a 401 unless it is a working token: ladder.request_checks)
    if who == API:
        return _plain_accept(request.headers.get("Accept", ""))
    return settings.SESSION_COOKIE_NAME not in request.COOKIES and "messages" not in request.COOKIES


def _entry_key(request: HttpRequest, url_name: str, host: str) -> str:
    # Scheme and host: pagination links are absolute URLs (and the inner
    # middleware's answer, an HTTPS redirect or HSTS, depends on them).
    parts = [request.scheme, host, request.path, request.META.get("QUERY_STRING", "")]
    if not PUBLIC_READS[url_name][1]:  # an immutable read: the encoding it is sent in
        # ("v2": entries stored before casual replays stopped being immutable are never read)
        parts += ["gzip" if accepts_gzip(request) else "identity", "v2"]
    raw = "\n".join(parts)
    return f"public:page:{url_name}:{hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()}"


class PublicReadCacheMiddleware:
    """First in MIDDLEWARE: a hit is answered before sessions, CSRF,
    authentication, django-axes, CSP or anything else does any work (the
    headers they add are stored with the entry). One round trip to the
    cache a hit: the generations and the entry are read together, and the
    entry is served only if it was built from the current generations."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        plan = self._plan(request)
        if plan is None:
            return self.get_response(request)
        url_name, scopes = plan
        try:
            host = request.get_host()
        except DisallowedHost:
            return self.get_response(request)  # (the inner middleware answers 400)
        key = _entry_key(request, url_name, host)
        try:
            found = cache.get_many([*(_gen_key(s) for s in scopes), key])
            gens = _fresh_generations(scopes, found)
        except Exception:
            log.warning("the cache is unavailable: a public read goes to the database", exc_info=True)
            return self.get_response(request)
        entry = found.get(key)
        if entry is None or entry.get("gens") != gens:
            response = self.get_response(request)
            entry = self._entry(response, gens, immutable=not scopes)
            if entry is None:
                return response
            try:
                cache.set(key, entry, settings.CARDROOM_PUBLIC_CACHE_SECONDS if scopes else REPLAY_CACHE_SECONDS)
            except Exception:
                log.warning("could not cache a public read", exc_info=True)
        return self._respond(request, entry)

    def _plan(self, request: HttpRequest) -> tuple[str, tuple[str, ...]] | None:
        if request.method != "GET":
            return None
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return None
        spec = PUBLIC_READS.get(match.url_name)
        if spec is None:
            return None
        who, scopes, params = spec
        if not _shared_page(request, who) or not cut_query(request, params):
            return None
        return match.url_name, scopes

    @staticmethod
    def _entry(response, gens: tuple[str, ...], *, immutable: bool = False) -> dict | None:
        """What is kept of a response: a complete 200 that sets no cookie,
        with the generations it was built from. An immutable one keeps the
        view's ETag and Cache-Control."""
        if response.status_code != 200 or response.streaming or response.cookies:
            return None
        if "no-store" in response.get("Cache-Control", "") or "private" in response.get("Cache-Control", ""):
            return None
        if immutable and not (response.has_header("ETag") and "immutable" in response.get("Cache-Control", "")):
            return None  # (a casual match's replay: it names a person, decision 191)
        if hasattr(response, "render") and not response.is_rendered:
            response.render()
        content = response.content
        unstored = {"set-cookie", "date", "content-length"} if immutable else _UNSTORED_HEADERS
        compress = not immutable and len(content) >= GZIP_MIN_BYTES and not response.has_header("Content-Encoding")
        return {
            "gens": gens,
            "content": content,
            # (mtime=0: the same page compresses to the same bytes, whichever process stores it)
            "gz": gzip.compress(content, compresslevel=6, mtime=0) if compress else None,
            "headers": [(k, v) for k, v in response.items() if k.lower() not in unstored],
            "etag": response["ETag"] if immutable else '"' + hashlib.blake2b(content, digest_size=16).hexdigest() + '"',
            "modified": None if immutable else time.time(),
        }

    @staticmethod
    def _respond(request: HttpRequest, entry: dict) -> HttpResponse:
        gz = entry.get("gz")
        gzipped = gz is not None and accepts_gzip(request)
        body = gz if gzipped else entry["content"]
        response = HttpResponse(body)
        for name, value in entry["headers"]:
            response[name] = value
        response["Content-Length"] = str(len(body))  # (of the representation sent)
        if entry["modified"] is None:  # immutable: the view's own cache headers
            return get_conditional_response(request, etag=entry["etag"], response=response)
        etag = entry["etag"]
        if gz is not None:
            # Both representations say they vary, so that no shared cache (nginx's
            # microcache keeps one copy per Accept-Encoding) hands one to the wrong client.
            patch_vary_headers(response, ("Accept-Encoding",))
        if gzipped:
            response["Content-Encoding"] = "gzip"
            etag = etag[:-1] + '-gz"'  # one ETag per representation
        response["ETag"] = etag
        response["Last-Modified"] = http_date(entry["modified"])
        if settings.CARDROOM_PROXY_CACHE_SECONDS > 0:
            # For nginx alone (it keeps the page this long and never passes
            # the header on); browsers still revalidate every time. Before
            # Cache-Control: nginx reads the headers in order, and a
            # max-age=0 read first makes the response one it never keeps.
            response["X-Accel-Expires"] = str(settings.CARDROOM_PROXY_CACHE_SECONDS)
        response["Cache-Control"] = PUBLIC_CACHE_CONTROL
        return get_conditional_response(request, etag=etag, last_modified=int(entry["modified"]), response=response)


# -- replays: immutable once written ----------------------------------------------------

REPLAY_CACHE_CONTROL = "public, max-age=31536000, immutable"
# A replay that names a person (a casual match's) changes once if the
# account is deleted: every client and proxy asks again (the ETag makes
# that a 304), and nginx keeps no copy (max-age=0).
NAMED_REPLAY_CACHE_CONTROL = PUBLIC_CACHE_CONTROL
REPLAY_CACHE_SECONDS = 24 * 3600


def _replay_key(match_id: int) -> str:
    return f"public:replay:v2:{match_id}"


def cached_replay(match_id: int) -> tuple[dict | None, object]:
    """The kept replay of a finished match (None: read it from storage),
    and the ``people`` generation to keep a fresh read under (read before
    the match is, so that a deletion committing meanwhile makes it stale).
    A replay that names a person is served only while no account was
    deleted since it was kept."""
    key, gen = _replay_key(match_id), _gen_key(PEOPLE)
    try:
        found = cache.get_many([key, gen])
        people = _fresh_generations((PEOPLE,), found)[0]
    except Exception:
        log.warning("the cache is unavailable: a replay is read from storage", exc_info=True)
        return None, None
    entry = found.get(key)
    if entry is not None and entry["named"] and entry["people"] != people:
        return None, people
    return entry, people


def keep_replay(match_id: int, gz: bytes, *, named: bool, people: object) -> dict:
    """A finished match's replay (gzip, as stored) and its ETag, kept for a
    day: it never changes, but for the name of a deleted person (``named``:
    kept under the ``people`` generation ``cached_replay`` gave)."""
    entry = {"gz": gz, "etag": hashlib.blake2b(gz, digest_size=16).hexdigest(), "named": named, "people": people}
    if people is not None:
        try:
            cache.set(_replay_key(match_id), entry, REPLAY_CACHE_SECONDS)
        except Exception:
            log.warning("could not cache a replay", exc_info=True)
    return entry


def forget_replays(match_ids: list[int]) -> None:
    """Drop the kept replays of these matches now (their files were
    rewritten: ladder.services.accounts). The ``people`` bump makes any
    copy kept meanwhile stale too."""
    try:
        cache.delete_many([_replay_key(pk) for pk in match_ids])
    except Exception:
        log.warning("could not drop kept replays", exc_info=True)


# -- the leaderboards' short-lived counts (ladder.selectors.pages) -------------------------


def listed_count_key(ladder_id: int) -> str:
    return f"web:listed-count:{ladder_id}"


def elo_positions_key(ladder_id: int) -> str:
    return f"web:elo-positions:{ladder_id}"


def forget_cached_standings(game: str) -> None:
    """Drop the cached counts and positions of the game's leaderboards (a
    bot was withdrawn, re-entered or deleted), once the transaction under
    way commits, as ``bump`` does: a service calls this, so it lives here
    rather than with the web selectors that fill them."""
    from ladder.models import Ladder

    def forget() -> None:
        ids = Ladder.objects.filter(game=game).values_list("pk", flat=True)
        cache.delete_many([key(pk) for pk in ids for key in (listed_count_key, elo_positions_key)])

    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(forget)
    else:
        forget()


# -- who invalidates (writes that go through the ORM's save) ---------------------------


def _matches_changed(sender, **kwargs) -> None:
    bump(MATCHES)


def _ratings_changed(sender, **kwargs) -> None:
    bump(RATINGS)


def connect_signals() -> None:
    from django.db.models.signals import post_delete, post_save

    from ladder.models import Bot, Match, Rating

    for signal in (post_save, post_delete):
        kind = "save" if signal is post_save else "delete"
        signal.connect(_matches_changed, sender=Match, dispatch_uid=f"public-cache-match-{kind}")
        signal.connect(_ratings_changed, sender=Bot, dispatch_uid=f"public-cache-bot-{kind}")
        signal.connect(_ratings_changed, sender=Rating, dispatch_uid=f"public-cache-rating-{kind}")
