"""The REST API (docs/api.md): thin views over selectors and services."""

from __future__ import annotations

import gzip
import json

from django.conf import settings
from django.contrib.auth import authenticate
from django.http import Http404, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, permissions, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from engine import game_ids, get_game_class
from ladder import caching, limits, selectors
from ladder.api import serializers as s
from ladder.api.errors import ERRORS, FilterError, error_response, errors
from ladder.api.pagination import MatchCursorPagination, Pagination, StandingsPagination
from ladder.api.parsers import LimitedJSONParser
from ladder.client_address import client_address
from ladder.converters import MAX_ID  # the ids are 64-bit: a larger number is no id (and overflows the database)
from ladder.limits import ScopedThrottle
from ladder.models import Bot, Ladder, Match
from ladder.selectors import adjusted as adjusted_selectors
from ladder.selectors.duplicate_sets import deal_published
from ladder.services import accounts, bot_management, casual
from ladder.services import bots as bot_services
from ladder.services import tournaments as tournament_services
from ladder.services.errors import Forbidden
from ladder.services.match_kinds import policy_for
from ladder.uploads import too_large_upload


class RegisterView(APIView):
    authentication_classes = []  # no token needed, and a stale one is no reason to refuse
    permission_classes = [permissions.AllowAny]
    throttle_classes = [ScopedThrottle]
    throttle_scope = "register"

    @extend_schema(request=s.RegisterInput, responses={201: s.TokenOutput, **errors(400, 415, 429)}, auth=[])
    def post(self, request):
        data = s.RegisterInput(data=request.data)
        data.is_valid(raise_exception=True)
        user = accounts.create_account(data.validated_data["username"], data.validated_data["password"])
        token = accounts.api_token(user)
        return Response({"token": token.key}, status=status.HTTP_201_CREATED)


class TokenView(APIView):
    authentication_classes = []
    permission_classes = [permissions.AllowAny]
    throttle_classes = [ScopedThrottle]
    throttle_scope = "login"

    @extend_schema(request=s.LoginInput, responses={200: s.TokenOutput, **errors(400, 415, 429)}, auth=[])
    def post(self, request):
        data = s.LoginInput(data=request.data)
        data.is_valid(raise_exception=True)
        # The Django request, not DRF's: django-axes marks a locked-out attempt
        # on it, and its middleware answers with the lockout response.
        user = authenticate(request._request, username=data.validated_data["username"], password=data.validated_data["password"])
        if user is None:
            return error_response("wrong username or password: check both, or reset the password on the website (/password-reset/)", None, 400)
        token = accounts.api_token(user)
        return Response({"token": token.key})


class GamesView(APIView):
    permission_classes = [permissions.AllowAny]

    @extend_schema(responses={200: s.GameOutput(many=True), **errors(401)})
    def get(self, request):
        out = []
        for game_id in game_ids():
            cls = get_game_class(game_id)
            out.append({
                "id": game_id, "name": cls.name, "min_players": cls.min_players, "max_players": cls.max_players,
                "options": {k: d for k, (_t, d) in cls.option_specs.items()},
            })
        return Response(s.GameOutput(out, many=True).data)


@extend_schema_view(get=extend_schema(responses={200: s.LadderOutput(many=True), **errors(401)}))
class LadderList(generics.ListAPIView):
    serializer_class = s.LadderOutput
    queryset = Ladder.objects.none()
    pagination_class = None

    def get_queryset(self):
        return selectors.ladders()


@extend_schema_view(get=extend_schema(responses={200: s.LadderOutput, **errors(401, 404)}))
class LadderDetail(generics.RetrieveAPIView):
    serializer_class = s.LadderOutput

    def get_queryset(self):
        return selectors.ladders()


@extend_schema_view(get=extend_schema(responses={200: s.StandingOutput(many=True), **errors(400, 401, 404)}))
class StandingsView(generics.ListAPIView):
    serializer_class = s.StandingOutput
    pagination_class = StandingsPagination

    def get_queryset(self):
        ladder = generics.get_object_or_404(Ladder, pk=self.kwargs["pk"])
        return selectors.standings(ladder)

    def paginate_queryset(self, queryset):
        page = selectors.with_bot_names(super().paginate_queryset(queryset))
        offset = (self.paginator.page.number - 1) * self.paginator.get_page_size(self.request)
        self.adjusted_ranking = adjusted_selectors.ranking(self.kwargs["pk"])
        settle = self.adjusted_ranking["settle_matches"] if self.adjusted_ranking else None
        adjusted = adjusted_selectors.for_bots(self.kwargs["pk"], [row["bot"] for row in page], settle)
        for i, row in enumerate(page, start=1):
            row["rank"] = offset + i
            row["win_rate"] = round(row["wins"] / row["games"], 4) if row["games"] else None
            row["adjusted"] = adjusted.get(row["bot"])
        return page

    def get_paginated_response(self, data):
        response = super().get_paginated_response(data)
        # Beside the page: the adjusted ranking's model and inputs (null before its first computation).
        response.data["adjusted_ranking"] = s.adjusted_ranking(self.adjusted_ranking)
        return response


class BotList(generics.ListCreateAPIView):
    serializer_class = s.BotOutput
    throttle_scope = "bot"

    def get_throttles(self):
        return [ScopedThrottle()] if self.request.method == "POST" else []

    @extend_schema(
        parameters=[
            OpenApiParameter("game", str, enum=game_ids()),
            OpenApiParameter("owner", str, description="a username"),
            OpenApiParameter("name", str, description="a bot name (unique within a game)"),
        ],
        responses={200: s.BotOutput(many=True), **errors(400, 401, 404)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        game = self.request.query_params.get("game")
        if game is not None and game not in game_ids():
            raise FilterError(f"the filter 'game' takes one of {', '.join(game_ids())}, not {game!r}", "game")
        bots = selectors.bots(game, self.request.query_params.get("owner"))
        name = self.request.query_params.get("name")
        return bots.filter(name=name) if name is not None else bots

    @extend_schema(
        request={"application/json": s.BotInput, "multipart/form-data": s.BotWithPackageInput},
        responses={201: s.BotCreatedOutput, **errors(400, 401, 403, 413, 429)},
    )
    def post(self, request, *args, **kwargs):
        data = s.BotInput(data=request.data)
        data.is_valid(raise_exception=True)
        multipart = request.content_type.startswith("multipart/")
        too_large = too_large_upload(request._request) if multipart else None  # the UploadLimit guard dropped it
        if not (multipart and ("file" in request.data or too_large)):
            bot = bot_services.create_bot(owner=request.user, **data.validated_data)
            return Response(s.BotOutput(bot, context={"request": request}).data, status=status.HTTP_201_CREATED)
        # With its first version: both or neither (a refused package leaves no empty bot).
        if too_large:
            return error_response(too_large, "file", 413)
        upload = request.FILES.get("file")
        if upload is None:
            return error_response("send the bot package as the multipart field 'file' (see /docs/bot-authors/#packaging)", "file", 400)
        refused = limits.refusal(request, "upload")  # an upload as well as a new bot
        if refused:
            return error_response(refused.message, None, 429, {"Retry-After": str(refused.retry_after)})
        s.VersionInput(data={"file": upload}).is_valid(raise_exception=True)  # the file name's length
        bot, version = bot_services.create_bot_with_version(
            owner=request.user, **data.validated_data, filename=upload.name or "bot.py",
            data=upload.read(settings.CARDROOM_MAX_UPLOAD_BYTES + 1),
        )  # fmt: skip
        context = {"request": request}
        body = {**s.BotOutput(bot, context=context).data, "version": s.VersionOutput(version, context=context).data}
        return Response(body, status=status.HTTP_201_CREATED)


class BotDetail(generics.RetrieveAPIView):
    """A bot. Its owner may edit its description, withdraw it from its
    game's ladders and re-enter it (PATCH), and delete it while it has
    played no ladder match (DELETE; one that has is kept as history:
    withdraw it instead)."""

    serializer_class = s.BotOutput
    http_method_names = ["get", "patch", "delete", "head", "options"]
    parser_classes = [LimitedJSONParser]

    def get_queryset(self):
        return selectors.bots()

    @extend_schema(responses={200: s.BotOutput, **errors(401, 404)})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(request=s.BotUpdateInput, responses={200: s.BotOutput, **errors(400, 401, 403, 404)})
    def patch(self, request, *args, **kwargs):
        bot = self.get_object()
        data = s.BotUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            return error_response("send 'description' (text) or 'withdrawn' (true or false) to change", None, 400)
        bot = bot_management.update_bot(bot=bot, user=request.user, **data.validated_data)
        return Response(s.BotOutput(bot, context={"request": request}).data)

    @extend_schema(responses={204: None, **errors(401, 403, 404, 409)})
    def delete(self, request, *args, **kwargs):
        bot_management.delete_bot(bot=self.get_object(), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class VersionDetail(APIView):
    """One version of a bot, with its validation progress; its owner may
    delete it while it has played no ladder match (not while it is being
    validated, nor the version the bot plays)."""

    def get_version(self):
        bot = generics.get_object_or_404(Bot.objects.select_related("owner"), pk=self.kwargs["pk"])
        return generics.get_object_or_404(selectors.versions(bot), number=self.kwargs["number"])

    @extend_schema(responses={200: s.VersionOutput, **errors(401, 404)})
    def get(self, request, pk: int, number: int):
        return Response(s.VersionOutput(self.get_version(), context={"request": request}).data)

    @extend_schema(responses={204: None, **errors(401, 403, 404, 409)})
    def delete(self, request, pk: int, number: int):
        bot_management.delete_version(version=self.get_version(), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeView(APIView):
    """Who the token (or session) belongs to: ``cardroom submit`` asks
    before it looks for the user's bot."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: s.MeOutput, **errors(401)})
    def get(self, request):
        return Response({"username": request.user.username, "is_staff": request.user.is_staff})


class ApiRoot(APIView):
    """The API's resources, with links (DRF's root-view convention); the
    schema at /api/schema/ describes every operation."""

    permission_classes = [permissions.AllowAny]
    ROOT_LINKS = [
        ("register", "api-register"), ("token", "api-token"), ("me", "api-me"), ("games", "api-games"),
        ("ladders", "api-ladders"), ("bots", "api-bots"), ("matches", "api-matches"), ("play", "api-play"),
        ("schema", "api-schema"), ("docs", "api-docs"),
    ]  # fmt: skip

    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="resource name -> URL")}, auth=[])
    def get(self, request):
        from rest_framework.reverse import reverse

        return Response({name: reverse(url_name, request=request) for name, url_name in self.ROOT_LINKS})


@extend_schema_view(get=extend_schema(responses={200: s.VersionOutput(many=True), **errors(400, 401, 404)}))
class VersionList(generics.ListAPIView):
    serializer_class = s.VersionOutput
    parser_classes = [MultiPartParser, FormParser, LimitedJSONParser]
    throttle_scope = "upload"

    def get_throttles(self):
        return [ScopedThrottle()] if self.request.method == "POST" else []

    def get_bot(self) -> Bot:
        return generics.get_object_or_404(Bot.objects.select_related("owner"), pk=self.kwargs["pk"])

    def get_queryset(self):
        return selectors.versions(self.get_bot())

    @extend_schema(request={"multipart/form-data": s.VersionInput}, responses={201: s.VersionOutput, **ERRORS})
    def post(self, request, *args, **kwargs):
        bot = self.get_bot()
        if bot.owner_id != request.user.pk:
            return error_response("only the bot's owner may upload versions of it: create a bot of your own with POST /api/bots/", None, 403)
        upload = request.FILES.get("file")
        too_large = too_large_upload(request._request)  # the UploadLimit guard (FILE_UPLOAD_HANDLERS)
        if too_large:
            return error_response(too_large, "file", 413)
        if upload is None:
            return error_response("send the bot package as the multipart field 'file' (see /docs/bot-authors/#packaging)", "file", 400)
        s.VersionInput(data={"file": upload}).is_valid(raise_exception=True)  # the file name's length
        data = upload.read(settings.CARDROOM_MAX_UPLOAD_BYTES + 1)
        version = bot_services.upload_version(bot=bot, filename=upload.name or "bot.py", data=data)
        return Response(s.VersionOutput(version, context={"request": request}).data, status=status.HTTP_201_CREATED)


ID_SCHEMA = {"type": "integer", "minimum": 1, "maximum": MAX_ID}

MATCH_FILTERS = [
    OpenApiParameter("ladder", ID_SCHEMA, description="a ladder id"),
    OpenApiParameter("bot", ID_SCHEMA, description="a bot id"),
    OpenApiParameter("status", str, enum=[c for c, _ in Match.Status.choices]),
]


class MatchList(generics.ListAPIView):
    serializer_class = s.MatchOutput
    pagination_class = MatchCursorPagination

    @extend_schema(parameters=MATCH_FILTERS, responses={200: s.MatchOutput(many=True), **errors(400, 401, 404)})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        params = self.request.query_params
        filters = {}
        for name in ("ladder", "bot"):
            if name in params:
                try:
                    filters[name] = int(params[name])
                except ValueError:
                    raise FilterError(f"the filter {name!r} takes an id (a whole number), not {params[name]!r}", name) from None
                if not 1 <= filters[name] <= MAX_ID:
                    raise FilterError(f"the filter {name!r} takes an id from 1 to {MAX_ID}, not {params[name]!r}", name)
        status_value = params.get("status")
        if status_value is not None and status_value not in Match.Status.values:
            raise FilterError(f"status must be one of {', '.join(Match.Status.values)}, not {status_value!r}", "status")
        return selectors.matches(filters.get("ladder"), filters.get("bot"), status_value)

    def paginate_queryset(self, queryset):
        return selectors.with_participants(super().paginate_queryset(queryset))


@extend_schema_view(get=extend_schema(responses={200: s.MatchOutput, **errors(401, 404)}))
class MatchDetail(generics.RetrieveAPIView):
    serializer_class = s.MatchOutput

    def get_queryset(self):
        return selectors.matches()

    def get_object(self):
        row = selectors.match_row(self.kwargs["pk"])
        if row is None:
            raise Http404
        return selectors.with_participants([row])[0]


class ReplayView(APIView):
    """A finished match's replay never changes: it is served with long cache
    headers and an ETag, from the shared cache after the first request, and
    gzip-compressed as stored to a client that accepts that. A casual
    match's names its person, whose name becomes a tombstone if the account
    is deleted: it is revalidated on every use instead (decision 191)."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        responses={(200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="replay format v1"), **errors(401, 404)}
    )
    def get(self, request, pk: int):
        entry, people = caching.cached_replay(pk)
        if entry is None:
            match = selectors.match(pk)
            if match is None:
                raise Http404
            try:
                gz = selectors.replay_gz(match) if match.status == Match.Status.FINISHED else None
            except OSError:
                return error_response(f"the replay file of match {pk} is missing from storage", None, 404)
            if gz is not None and not deal_published(match):
                return error_response(
                    f"match {pk} is a rotation of a duplicate set still being played: its replay (the set's deal) is served once the whole set is over",
                    None, 404,
                )  # fmt: skip
            if gz is None:
                return error_response(
                    f"match {pk} has no replay yet (status: {match.status}): it has one once the match is finished", None, 404
                )
            entry = caching.keep_replay(pk, gz, named=policy_for(match.kind).has_person_seat, people=people)
        gzipped = caching.accepts_gzip(request)
        # One ETag per representation: the gzip and the plain bytes differ.
        etag = f'"{entry["etag"]}{"-gz" if gzipped else ""}"'
        response = HttpResponse(entry["gz"] if gzipped else gzip.decompress(entry["gz"]), content_type="application/json")
        if gzipped:
            response["Content-Encoding"] = "gzip"
        response["Content-Disposition"] = f'attachment; filename="cardroom-match-{pk}.json"'
        response["Vary"] = "Accept-Encoding"
        response["ETag"] = etag
        response["Cache-Control"] = caching.NAMED_REPLAY_CACHE_CONTROL if entry["named"] else caching.REPLAY_CACHE_CONTROL
        return get_conditional_response(request, etag=etag, response=response)


class LogView(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="the bot's stderr"), **errors(401, 403, 404)}
    )
    def get(self, request, pk: int, seat: int):
        match = selectors.match(pk)
        if match is None:
            raise Http404
        participant = selectors.participant(match, seat)
        if participant is None:
            return error_response(f"match {pk} has no seat {seat}: its seats are 0 to {match.num_players - 1}", None, 404)
        if participant.bot.owner_id != request.user.pk:
            return error_response("only the bot's owner may read its logs: send the owner's token (the replay is public)", None, 403)
        return HttpResponse(selectors.log_text(participant), content_type="text/plain; charset=utf-8")


class TournamentList(generics.ListAPIView):
    serializer_class = s.TournamentOutput

    @extend_schema(responses={200: s.TournamentOutput(many=True), **errors(400, 401, 404)})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        return selectors.tournaments_list()

    @extend_schema(request=s.TournamentInput, responses={201: s.TournamentDetailOutput, **errors(400, 401, 403)})
    def post(self, request, *args, **kwargs):
        if not (request.user and request.user.is_staff):
            return error_response("only staff create events", None, status.HTTP_403_FORBIDDEN)
        data = s.TournamentInput(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        ids = fields.pop("bots")
        found = {b.pk: b for b in Bot.objects.filter(pk__in=ids).select_related("current_version")}
        missing = [i for i in ids if i not in found]
        if missing:
            return error_response(f"no bot with id {missing[0]}", "bots", status.HTTP_400_BAD_REQUEST)
        t = tournament_services.create_tournament(user=request.user, bots=[found[i] for i in ids], **fields)
        return Response(_tournament_detail(t, request), status=status.HTTP_201_CREATED)


# The entries an event's own answer holds: its first page of the paged list
# at the largest page size, so a field up to this size is all there, as it
# always was (decision 199).
ENTRIES_IN_DETAIL = Pagination.max_page_size


def _tournament_detail(t, request) -> dict:
    entries, count = selectors.tournament_entries_from(t, 0, ENTRIES_IN_DETAIL)
    following = None
    if count > len(entries):
        path = reverse("api-tournament-entries", kwargs={"pk": t.pk})
        following = request.build_absolute_uri(f"{path}?page=2&page_size={ENTRIES_IN_DETAIL}")
    data = s.TournamentOutput(t).data
    return {**data, "progress": selectors.tournament_progress(t), "entries": entries, "entries_count": count, "entries_next": following}


def _shared_answer(request, url_name: str, build):
    """An event's answer that is everyone's alike (nothing in it is the
    caller's), signed in or not: rendered once for each change of the event
    and kept as the public reads are (caching.cached_part, decision 200), so
    a signed-in client, whom the shared page never answers, costs a cache
    read rather than a rendering of 200 entries. Built from the request cut
    down to the page's own parameters, as the shared page is (its links are
    absolute: no one's junk parameter in them); one that asks for a page
    twice, or a format, is built as it came."""
    if not caching.cut_query(request._request, caching.PUBLIC_READS[url_name][2]):
        return Response(build())
    part = f"{url_name}:{request.scheme}://{request.get_host()}{request._request.get_full_path()}"
    return _stored_json(request, caching.cached_part(part, caching.PUBLIC_READS[url_name][1], lambda: JSONRenderer().render(build())))


def _stored_json(request, body: bytes):
    """JSON rendered before as the answer: as it is for plain JSON; a
    variant the client chose (indent=, the browsable API) rendered from it."""
    if type(request.accepted_renderer) is JSONRenderer and ";" not in request.accepted_media_type:
        return HttpResponse(body, content_type="application/json")
    return Response(json.loads(body))


def _event_or_404(pk: int):
    t = selectors.tournament(pk)
    if t is None:
        raise Http404
    return t


class TournamentEntries(APIView):
    """An event's field, paged in entry order (anyone); an open event's
    entries: the bot's owner enters it (or, entered already, freezes its
    current version afresh) until the start time."""

    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    @extend_schema(
        parameters=[
            OpenApiParameter("page", {"type": "integer", "minimum": 1}),
            OpenApiParameter("page_size", {"type": "integer", "minimum": 1}, description=f"entries a page (default {Pagination.page_size}, at most {Pagination.max_page_size})"),
        ],
        responses={200: s.TournamentEntryPage, **errors(400, 401, 404)},
        description="The field in entry order (index 0 first), a page at a time; the event's own answer holds the first "
        f"{ENTRIES_IN_DETAIL} and links here (entries_next) when there are more.",
    )
    def get(self, request, pk: int):
        t = _event_or_404(pk)

        def build() -> dict:
            paginator = Pagination()
            page = paginator.paginate_queryset(selectors.entries_in_order(t), request, view=self)
            return paginator.get_paginated_response([selectors.tournament_entry_row(e) for e in page]).data

        return _shared_answer(request, "api-tournament-entries", build)

    @extend_schema(
        request=s.TournamentEntryInput,
        responses={201: s.TournamentEntryOutput, 200: s.TournamentEntryOutput, **errors(400, 401, 403, 404, 409)},
        description="201: entered; 200: the bot was entered already, and its entry now holds the bot's current active version. "
        "409 once the event's start time has come (entries close then) or for an event that takes no entries.",
    )
    def post(self, request, pk: int):
        t = _event_or_404(pk)
        data = s.TournamentEntryInput(data=request.data)
        data.is_valid(raise_exception=True)
        bot = Bot.objects.filter(pk=data.validated_data["bot"]).select_related("current_version", "owner").first()
        if bot is None:
            return error_response(f"no bot with id {data.validated_data['bot']}", "bot", status.HTTP_400_BAD_REQUEST)
        _entry, created = tournament_services.enter(t, request.user, bot)
        row = selectors.tournament_entry_row(selectors.tournament_entry(t, bot.pk))
        return Response(s.TournamentEntryOutput(row).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class TournamentEntryDetail(APIView):
    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={204: None, **errors(401, 403, 404, 409)}, description="Withdraws the bot's entry (its owner) until the start time; 409 after it.")
    def delete(self, request, pk: int, bot: int):
        t = _event_or_404(pk)
        found = Bot.objects.filter(pk=bot).first()
        if found is None:
            return error_response(f"no bot with id {bot}", None, status.HTTP_404_NOT_FOUND)
        tournament_services.withdraw(t, request.user, found)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TournamentDetail(APIView):
    @extend_schema(responses={200: s.TournamentDetailOutput, **errors(401, 404)})
    def get(self, request, pk: int):
        t = selectors.tournament(pk)
        if t is None:
            raise Http404
        return _shared_answer(request, "api-tournament", lambda: _tournament_detail(t, request))


CROSSTABLE_ROWS = selectors.CROSSTABLE_ROWS


class TournamentStandings(APIView):
    """Read as stored when the event's results came in (never computed on
    a request), each page of the crosstable (CROSSTABLE_ROWS rows) as the
    JSON bytes rendered then: only the event's live progress is rendered
    here and put in front of them."""

    @extend_schema(
        parameters=[OpenApiParameter("crosstable_page", {"type": "integer", "minimum": 1}, description=f"which {CROSSTABLE_ROWS} rows of the crosstable (default 1)")],
        responses={200: s.TournamentStandingsOutput, **errors(400, 401, 404)},
    )
    def get(self, request, pk: int):
        t = selectors.tournament(pk)
        if t is None:
            raise Http404
        raw = request.query_params.get("crosstable_page", "1")
        if not raw.isdigit() or not 1 <= int(raw) <= 10_000:
            raise FilterError(f"crosstable_page takes a page number from 1, not {raw!r}", "crosstable_page")
        page = int(raw)
        stored, pages = selectors.tournament_standings_page(t, page)
        if stored is None:
            raise FilterError(f"crosstable_page {page} is past the last page ({max(1, pages)})", "crosstable_page")
        renderer = JSONRenderer()
        head = b'{"tournament":%d,"progress":%s,' % (t.pk, renderer.render(selectors.tournament_progress(t)))
        return _stored_json(request, head + stored[1:])


@extend_schema_view(get=extend_schema(responses={200: s.TournamentMatchOutput(many=True), **errors(400, 401, 404)}))
class TournamentMatches(generics.ListAPIView):
    serializer_class = s.TournamentMatchOutput

    def get_queryset(self):
        t = selectors.tournament(self.kwargs["pk"])
        if t is None:
            raise Http404
        return selectors.tournament_matches(t)


# -- casual matches: the human seat (docs/api.md; decisions 130-136) ----------------------


class PlayStart(APIView):
    """Start a casual match: you in one seat, bots in the others. Never
    rated; its replay is at /api/matches/{id}/replay/ once it is finished."""

    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [LimitedJSONParser]

    @extend_schema(responses={200: s.PlayListOutput(many=True), **errors(401)}, description="Your casual matches, newest first (the last 50).")
    def get(self, request):
        return Response(s.PlayListOutput(selectors.casual_matches_of(request.user)[:50], many=True).data)

    @extend_schema(request=s.PlayInput, responses={201: s.PlayCreatedOutput, **errors(400, 401, 413, 415, 429)})
    def post(self, request):
        data = s.PlayInput(data=request.data)
        data.is_valid(raise_exception=True)
        match = casual.start(user=request.user, address=client_address(request), **data.validated_data)
        return Response({"id": match.pk}, status=status.HTTP_201_CREATED)


def _owned_casual_seat(request, pk: int):
    seat = selectors.casual_seat(pk)
    if seat is None:
        raise Http404
    if seat.user_id != request.user.pk:
        # The seat shows a hidden hand: only its person reads it (403, not
        # 404: the match itself is public at /api/matches/{id}/).
        raise Forbidden(f"only the person who started casual match {pk} may read or play its seat")
    return seat


class PlaySeat(APIView):
    """The person's seat: what a bot in it would be sent now. Asking is
    what keeps the seat from the idle forfeit (decision 133)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses={200: s.PlayOutput, **errors(401, 403, 404)})
    def get(self, request, pk: int):
        seat = _owned_casual_seat(request, pk)
        casual.seen(seat)
        match = seat.match
        awaiting = bool(seat.message) and seat.answer is None
        left = None
        if awaiting and seat.move_deadline is not None:
            left = max(0, int((seat.move_deadline - timezone.now()).total_seconds() * 1000))
        body = {
            "status": match.status,
            "seat": seat.seat,
            "message": json.loads(seat.message) if awaiting else None,
            "decision": seat.decision,
            "move_deadline": seat.move_deadline if left is not None else None,
            "move_time_left_ms": left,
            "idle_forfeit_seconds": settings.CARDROOM_CASUAL_IDLE_SECONDS,
            "forfeit": {"reason": seat.forfeit_reason, "detail": seat.forfeit_detail} if seat.forfeit_reason else None,
            "score": seat.score,
            "rank": seat.rank,
            "game": match.game,
            "num_players": match.num_players,
            "players": selectors.casual_players(seat),
        }
        return Response(s.PlayOutput(body).data)


class PlayAction(APIView):
    """Answer the seat's current decision. 400 (nothing changes) for an
    action that is not legal, with the engine's reason; 409 when the
    decision named is not the current one, or no answer is awaited."""

    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [LimitedJSONParser]  # the answer is parsed as every body is: bounded (decode_reply)

    @extend_schema(request=s.PlayActionInput, responses={200: s.PlayActionOutput, **errors(400, 401, 403, 404, 409, 413, 415)})
    def post(self, request, pk: int):
        # casual.answer finds the seat under its row lock and refuses a
        # missing one (404) or another person's (403) itself.
        decision = casual.answer(user=request.user, match_id=pk, body=request.data)
        return Response({"decision": decision, "status": "accepted"})


@csrf_exempt
def not_found(request, *args, **kwargs):
    """Any other path under /api/: a JSON 404 like the rest of the API."""
    return JsonResponse({"error": f"not found: no API resource at {request.path} (GET /api/ lists the resources)"}, status=404)
