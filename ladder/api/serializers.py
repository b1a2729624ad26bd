"""API representations. Input serializers only check shapes; the services
decide everything else."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ladder.models import GAME_CHOICES, Bot, BotVersion, Ladder, Match, Participant, Rating
from ladder.selectors import adjusted as adjusted_selectors
from ladder.selectors import event_seed_published, progress_text, validation_progress

# The representations the output serializers below build directly (their
# to_representation): DRF's own fields, so a value looks exactly as the
# field would give it (a Decimal as "1508.00", a datetime as DRF formats it).
_DECIMAL = serializers.DecimalField(max_digits=9, decimal_places=2)  # the Elo fields


def _decimal(value) -> str | None:
    return None if value is None else _DECIMAL.to_representation(value)


def _datetime_field() -> serializers.DateTimeField:
    """DRF's DateTimeField with the current time zone looked up once (for a
    page, not for every datetime: that lookup, a thread- and task-local, was
    two thirds of a datetime's cost and a fifth of a page of matches)."""
    return serializers.DateTimeField(default_timezone=timezone.get_current_timezone() if settings.USE_TZ else None)


def _float(value) -> float | None:
    return None if value is None else float(value)


class RegisterInput(serializers.Serializer):
    # Only the shape here: the rules (length, characters, reserved names,
    # case variants and look-alikes) are ladder.services.accounts', the web
    # sign-up form's too.
    username = serializers.CharField(max_length=150, help_text="3-40 letters (of one script), digits and _ . @ + -")
    password = serializers.CharField(min_length=8, max_length=128, write_only=True, trim_whitespace=False)

    def validate(self, attrs):
        # The project's AUTH_PASSWORD_VALIDATORS (too common, all digits, too
        # like the username...), with the user the password is meant for.
        user = get_user_model()(username=attrs["username"])
        try:
            password_validation.validate_password(attrs["password"], user=user)
        except DjangoValidationError as exc:
            raise serializers.ValidationError({"password": list(exc.messages)}) from None
        return attrs


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()


class LoginInput(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, trim_whitespace=False)


class GameOutput(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    min_players = serializers.IntegerField()
    max_players = serializers.IntegerField()
    options = serializers.DictField(help_text="option name -> default value")


class LadderOutput(serializers.ModelSerializer):
    class Meta:
        model = Ladder
        fields = ["id", "name", "game", "players_per_match", "options", "startup_ms", "per_move_ms", "overage_ms", "total_ms", "active"]


class AdjustedOutput(serializers.Serializer):
    version = serializers.IntegerField(help_text="the id of the version the bot plays now (what the figures are of)")
    version_number = serializers.IntegerField()
    rating = serializers.FloatField(allow_null=True, help_text="the luck-adjusted rating (docs/ladder.md); null before its first rated match")
    low = serializers.FloatField(allow_null=True, help_text="its 95% interval")
    high = serializers.FloatField(allow_null=True)
    place = serializers.IntegerField(allow_null=True, help_text="1 = best, among every version rated on the ladder")
    matches = serializers.IntegerField(help_text="its rated matches the ranking counts")
    settled = serializers.BooleanField(help_text="its place is settled: within one of its true place (docs/ladder.md)")
    more_matches = serializers.IntegerField(allow_null=True, help_text="about how many more matches until settled; null once settled")


class LadderAdjustedOutput(AdjustedOutput):
    ladder = serializers.IntegerField()
    ladder_name = serializers.CharField()


def adjusted_ranking(ranking: dict | None) -> dict | None:
    """The standings' ``adjusted_ranking`` (its schema: ladder.api.pagination.StandingsPagination)."""
    if ranking is None:
        return None
    return {**ranking, "computed": _datetime_field().to_representation(ranking["computed"])}


class StandingOutput(serializers.ModelSerializer):
    rank = serializers.IntegerField(help_text="1-based position by Elo")
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    owner = serializers.CharField(source="bot.owner.username")
    elo = serializers.DecimalField(max_digits=9, decimal_places=2)
    openskill_ordinal = serializers.FloatField(source="ordinal")
    win_rate = serializers.FloatField(allow_null=True)
    adjusted = AdjustedOutput(allow_null=True, help_text="the luck-adjusted rating of the version it plays now (null: no version)")

    class Meta:
        model = Rating
        fields = ["rank", "bot", "bot_name", "owner", "elo", "openskill_ordinal", "mu", "sigma", "games", "wins", "win_rate", "forfeits", "provisional", "adjusted"]

    def to_representation(self, row: dict) -> dict:
        # Built directly from a row of ladder.selectors.standings() (with
        # with_bot_names(), and the rank and win rate the view adds): what the
        # fields above would give, without DRF's field machinery. The fields
        # stay the documented schema; a field added there must be added here.
        return {
            "rank": row["rank"],
            "bot": row["bot"],
            "bot_name": row["bot_name"],
            "owner": row["owner_name"],
            "elo": _decimal(row["elo"]),
            "openskill_ordinal": _float(row["ordinal"]),
            "mu": _float(row["mu"]),
            "sigma": _float(row["sigma"]),
            "games": row["games"],
            "wins": row["wins"],
            "win_rate": _float(row["win_rate"]),
            "forfeits": row["forfeits"],
            "provisional": row["provisional"],
            "adjusted": row["adjusted"],
        }


class BotInput(serializers.Serializer):
    game = serializers.ChoiceField(choices=GAME_CHOICES)
    name = serializers.CharField(max_length=40)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class BotOutput(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username")
    current_version = serializers.IntegerField(source="current_version.number", allow_null=True, default=None)
    withdrawn = serializers.SerializerMethodField(
        help_text="withdrawn from its game's ladders by its owner: it keeps its history, is left out of the current "
        "standings and is not matched"
    )

    class Meta:
        model = Bot
        fields = ["id", "name", "game", "owner", "description", "builtin", "current_version", "withdrawn", "created"]

    def get_withdrawn(self, bot: Bot) -> bool:
        return bot.withdrawn is not None


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only (DRF's also takes "yes", 0, "on"...)."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictCharField(serializers.CharField):
    """A JSON string only (DRF's also turns a number into text)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class BotUpdateInput(serializers.Serializer):
    description = StrictCharField(max_length=2000, required=False, allow_blank=True, trim_whitespace=False)
    withdrawn = StrictBooleanField(
        required=False, help_text="true: withdraw the bot from its game's ladders; false: re-enter it"
    )


class MeOutput(serializers.Serializer):
    username = serializers.CharField()
    is_staff = serializers.BooleanField()


class VersionInput(serializers.Serializer):
    # max_length: the name is kept in BotVersion.filename (200 characters).
    file = serializers.FileField(
        max_length=200,
        allow_empty_file=True,  # the service says "the file is empty", naming the file
        help_text="a .py or .js file, or a .zip / .tar.gz with a manifest (cardroom.toml or bot.json)",
    )


def _nullable_int(help_text: str):
    return extend_schema_field({"type": "integer", "nullable": True, "description": help_text})


class VersionOutput(serializers.ModelSerializer):
    validation_log = serializers.SerializerMethodField(help_text="shown to the bot's owner only")
    queue_position = serializers.SerializerMethodField()
    validation_step = serializers.SerializerMethodField()
    validation_steps = serializers.SerializerMethodField()
    validation_match = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField(help_text="the validation progress in words (empty once it is over)")
    adjusted = serializers.SerializerMethodField(
        help_text="active: its luck-adjusted rating on each active ladder of its game, whether its place there is "
        "settled and, if not, about how many more matches it needs (docs/ladder.md); [] otherwise"
    )

    class Meta:
        model = BotVersion
        fields = [
            "id", "number", "status", "filename", "sha256", "size", "runtime", "created", "activated", "validation_log",
            "queue_position", "validation_step", "validation_steps", "validation_match", "progress", "adjusted",
        ]  # fmt: skip

    def get_validation_log(self, version: BotVersion) -> str | None:
        user = self.context["request"].user
        return version.validation_log if user.is_authenticated and user.pk == version.bot.owner_id else None

    def _progress(self, version: BotVersion) -> dict:
        # Computed once per version (a query or two while it is pending or
        # validating, none after).
        try:
            return version._validation_progress
        except AttributeError:
            version._validation_progress = validation_progress(version)
            return version._validation_progress

    @_nullable_int("pending: its place in the validation queue (1 = next); null otherwise")
    def get_queue_position(self, version: BotVersion):
        return self._progress(version)["queue_position"]

    @_nullable_int("validating: which validation match it is playing now (1-based); null otherwise")
    def get_validation_step(self, version: BotVersion):
        return self._progress(version)["validation_step"]

    @_nullable_int("validating: how many validation matches it plays (one per player count); null otherwise")
    def get_validation_steps(self, version: BotVersion):
        return self._progress(version)["validation_steps"]

    @_nullable_int("validating: the id of the validation match it is playing (its web page: /matches/{id}/)")
    def get_validation_match(self, version: BotVersion):
        return self._progress(version)["validation_match"]

    def get_progress(self, version: BotVersion) -> str:
        return progress_text(version, self._progress(version))

    @extend_schema_field(LadderAdjustedOutput(many=True))
    def get_adjusted(self, version: BotVersion) -> list[dict]:
        if version.status != BotVersion.Status.ACTIVE:
            return []  # (no query: a bot has one active version)
        return [{"ladder": ladder_id, **figures} for ladder_id, figures in adjusted_selectors.for_version(version).items()]


class BotWithPackageInput(BotInput):
    # POST /api/bots/ as multipart: the bot and its first version at once.
    file = serializers.FileField(
        max_length=200,
        required=False,
        allow_empty_file=True,
        help_text="the first version: a .py or .js file, or a .zip / .tar.gz with a manifest. With it the bot is created "
        "only if the package is accepted",
    )


class BotCreatedOutput(BotOutput):
    version = VersionOutput(required=False, help_text="the first version, when the package was sent with the bot")

    class Meta(BotOutput.Meta):
        fields = [*BotOutput.Meta.fields, "version"]


def _forfeit(p: dict) -> dict | None:
    if not p["forfeit_reason"]:
        return None
    return {"reason": p["forfeit_reason"], "event": p["forfeit_event"]}


def _elo_change(p: dict) -> str | None:
    if p["elo_before"] is None or p["elo_after"] is None:
        return None
    return f"{p['elo_after'] - p['elo_before']:+.2f}"


def _seed(match: dict) -> int | None:
    # The seed decides every card: known before the match is played (or
    # while it runs, or before a failed one is re-queued), it would tell
    # a bot's author the deal. A duplicate set's rotations share it: not
    # before the whole set is over (ladder.services.duplicate_sets).
    return match["seed"] if match["status"] == Match.Status.FINISHED and not match.get("set_open") else None


def _duplicate_set(match: dict) -> dict | None:
    if match.get("duplicate_set") is None:
        return None
    return {"id": match["duplicate_set"], "rotation": match["set_rotation"], "over": not match.get("set_open")}


# A seat of a match: a participant row of ladder.selectors.with_participants().
# to_representation builds what the declared fields would, directly: through
# DRF's fields (and models), a page of 100 matches cost ~90 ms of Python in
# bench_api. The fields are still the documented schema (drf-spectacular): a
# field added to them must be added to to_representation too. (Comments, not
# docstrings: a serializer's docstring becomes its schema description.)
class ParticipantOutput(serializers.ModelSerializer):
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    owner = serializers.CharField(source="bot.owner.username")
    version = serializers.IntegerField(source="version.number")
    forfeit = serializers.SerializerMethodField()
    elo_change = serializers.SerializerMethodField()
    version_id = serializers.IntegerField(help_text="the version's id (the adjusted ranking's key)")
    payoff = serializers.FloatField(allow_null=True, help_text="rank points (k - p)/(k - 1), ties sharing; null until ranked")
    luck = serializers.FloatField(allow_null=True, help_text="the part of the payoff chance gave the seat (docs/luck.md); null when not known")
    adjusted = serializers.FloatField(allow_null=True, help_text="payoff - luck; null when the luck is not known")

    class Meta:
        model = Participant
        fields = ["seat", "bot", "bot_name", "owner", "version", "score", "rank", "forfeit", "elo_before", "elo_after", "elo_change", "mu_before", "mu_after", "sigma_before", "sigma_after", "version_id", "payoff", "luck", "adjusted"]

    def get_forfeit(self, p: dict) -> dict | None:
        return _forfeit(p)

    def get_elo_change(self, p: dict) -> str | None:
        return _elo_change(p)

    def to_representation(self, p: dict) -> dict:
        return _participant(p)


def _participant(p: dict) -> dict:
    return {
        "seat": p["seat"],
        "bot": p["bot"],
        "bot_name": p["bot_name"],
        "owner": p["owner_name"],
        "version": p["version_number"],
        "score": p["score"],
        "rank": p["rank"],
        "forfeit": _forfeit(p),
        "elo_before": _decimal(p["elo_before"]),
        "elo_after": _decimal(p["elo_after"]),
        "elo_change": _elo_change(p),
        "mu_before": _float(p["mu_before"]),
        "mu_after": _float(p["mu_after"]),
        "sigma_before": _float(p["sigma_before"]),
        "sigma_after": _float(p["sigma_after"]),
        "version_id": p["version"],
        "payoff": p["payoff"],
        "luck": p["luck"],
        "adjusted": p["adjusted"],
    }


# A match with its seats: a row of ladder.selectors.matches() given its
# participants by with_participants(), built directly like ParticipantOutput.
class MatchOutput(serializers.ModelSerializer):
    ladder_name = serializers.CharField(source="ladder.name", allow_null=True, default=None)
    seed = serializers.SerializerMethodField(
        help_text="the chance seed, once the match is finished (null before; a rotation of a duplicate set: once the whole set is over)"
    )
    duplicate_set = serializers.SerializerMethodField(
        help_text="a rotation of a duplicate set (one deal played in every seat rotation, docs/ladder.md): "
        "{id, rotation, over}; null for a match of no set"
    )
    participants = ParticipantOutput(many=True)
    luck_value_function = serializers.CharField(
        allow_null=True, help_text="the value function (NAME@VERSION) of the seats' luck; null when it is not known"
    )

    class Meta:
        model = Match
        fields = ["id", "ladder", "ladder_name", "kind", "game", "options", "num_players", "seed", "status", "attempts", "num_events", "created", "started", "finished", "rating_sequence", "duplicate_set", "participants", "luck_value_function"]
        extra_kwargs = {
            "rating_sequence": {
                "help_text": "the order in which the ratings of rated matches were applied: replaying the matches of a ladder "
                "by ascending rating_sequence reproduces every Elo before and after (docs/ladder.md); not dense; null if not rated"
            }
        }

    def get_seed(self, match: dict) -> int | None:
        return _seed(match)

    def get_duplicate_set(self, match: dict) -> dict | None:
        return _duplicate_set(match)

    def to_representation(self, match: dict) -> dict:
        try:  # one for a whole list (many=True has one child serializer)
            to_datetime = self._datetime
        except AttributeError:
            to_datetime = self._datetime = _datetime_field().to_representation
        return {
            "id": match["id"],
            "ladder": match["ladder"],
            "ladder_name": match["ladder_name"],
            "kind": match["kind"],
            "game": match["game"],
            "options": match["options"],
            "num_players": match["num_players"],
            "seed": _seed(match),
            "status": match["status"],
            "attempts": match["attempts"],
            "num_events": match["num_events"],
            "created": None if match["created"] is None else to_datetime(match["created"]),
            "started": None if match["started"] is None else to_datetime(match["started"]),
            "finished": None if match["finished"] is None else to_datetime(match["finished"]),
            "rating_sequence": match["rating_sequence"],
            "duplicate_set": _duplicate_set(match),
            "participants": [_participant(p) for p in match["participants"]],
            "luck_value_function": match["luck_value_function"],
        }


class ErrorOutput(serializers.Serializer):
    error = serializers.CharField(help_text="what was wrong, for a human")
    field = serializers.CharField(required=False, help_text="the input at fault, where there is one")


class TournamentInput(serializers.Serializer):
    name = serializers.CharField(max_length=80)
    game = serializers.ChoiceField(choices=GAME_CHOICES)
    format = serializers.ChoiceField(choices=["round-robin", "swiss", "duplicate"])
    bots = serializers.ListField(child=serializers.IntegerField(min_value=1), max_length=1000, default=list,
                                 help_text="the field: bot ids (each bot's current version is frozen); with starts, the first entries (may be empty)")
    table_size = serializers.IntegerField(min_value=2, max_value=6)
    deals = serializers.IntegerField(min_value=1, max_value=1000, default=1)
    rounds = serializers.IntegerField(min_value=1, max_value=1000, required=False, allow_null=True, default=None)
    seed = serializers.IntegerField(min_value=0, max_value=2**62 - 1, required=False, allow_null=True, default=None)
    options = serializers.DictField(required=False, default=dict)
    startup_ms = serializers.IntegerField(default=10_000)
    per_move_ms = serializers.IntegerField(default=1_000)
    overage_ms = serializers.IntegerField(default=10_000)
    total_ms = serializers.IntegerField(default=300_000)
    starts = serializers.DateTimeField(
        required=False, allow_null=True, default=None,
        help_text="an open event: users enter their bots until this time (ISO 8601 with its zone, CARDROOM_EVENT_MIN_LEAD_SECONDS (60) to a year ahead), "
        "when the field is frozen and the schedule drawn",
    )  # fmt: skip
    entries_per_user = serializers.IntegerField(default=1, help_text="an open event: entries one user's bots may hold (1-20)")
    decided_by = serializers.ChoiceField(
        choices=["plain", "adjusted"], default="plain",
        help_text="what orders the final table first: plain points per match (the default), or the points with the luck of the cards taken out (docs/tournaments.md)",
    )  # fmt: skip

    def validate(self, attrs):
        if attrs.get("starts") is None and len(attrs["bots"]) < 2:
            raise serializers.ValidationError({"bots": "an event without starts needs a field of at least 2 bots"})
        return attrs


class TournamentEntryInput(serializers.Serializer):
    bot = serializers.IntegerField(min_value=1, help_text="one of your bots: its current active version is frozen in the entry")


class TournamentProgress(serializers.Serializer):
    played = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    running = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.FloatField()


class TournamentEntryOutput(serializers.Serializer):
    entry = serializers.IntegerField(help_text="the entry's index in the field (renumbered in entry order when an open event starts)")
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    version = serializers.IntegerField()
    version_number = serializers.IntegerField()
    entered = serializers.DateTimeField()


class TournamentOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    game = serializers.CharField()
    format = serializers.CharField()
    pairing = serializers.CharField(help_text="complete, balanced or swiss")
    table_size = serializers.IntegerField()
    deals = serializers.IntegerField()
    rounds = serializers.IntegerField(source="num_rounds")
    seed = serializers.SerializerMethodField(
        help_text="the event seed, once the event's last match has ended (null before: every match's cards are derived from it)"
    )
    options = serializers.DictField()
    time = serializers.SerializerMethodField()
    status = serializers.CharField(help_text="open (taking entries), running, paused, finished or cancelled")
    total_matches = serializers.IntegerField()
    starts = serializers.DateTimeField(allow_null=True, help_text="an open event's start: entries close then (null: staff picked the field)")
    entries_per_user = serializers.IntegerField()
    decided_by = serializers.CharField(
        help_text="plain or adjusted: which points per match order the final table first"
    )
    started = serializers.DateTimeField(allow_null=True)
    cancelled_reason = serializers.CharField(help_text="why an open event was cancelled at its start, or blank")
    created = serializers.DateTimeField()
    finished = serializers.DateTimeField(allow_null=True)

    def get_seed(self, t) -> int | None:
        return t.seed if event_seed_published(t) else None

    def get_time(self, t) -> dict:
        return {"startup_ms": t.startup_ms, "per_move_ms": t.per_move_ms, "overage_ms": t.overage_ms, "total_ms": t.total_ms}


class TournamentDetailOutput(TournamentOutput):
    progress = TournamentProgress()
    entries = TournamentEntryOutput(many=True, help_text="the field in entry order: all of it up to 200 entries, else the first 200 (entries_next)")
    entries_count = serializers.IntegerField(help_text="entries in the field")
    entries_next = serializers.URLField(allow_null=True, help_text="null when entries holds the whole field, else the next page of /api/tournaments/{id}/entries/")


class TournamentEntryPage(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = TournamentEntryOutput(many=True)


class TournamentMatchOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    number = serializers.IntegerField(source="tournament_slot__number")
    round = serializers.IntegerField(source="tournament_slot__round")
    table = serializers.IntegerField(source="tournament_slot__table")
    deal = serializers.IntegerField(source="tournament_slot__deal")
    rotation = serializers.IntegerField(source="tournament_slot__rotation")
    seats = serializers.ListField(child=serializers.IntegerField(), source="tournament_slot__seats", help_text="entry by seat")
    finished = serializers.DateTimeField(allow_null=True)


# The standings document (cardroom.tournament.standings; docs/tournaments.md,
# "Standings"), as stored when the event's results came in: these classes
# describe it in the schema, the view returns it as stored.
class StandingInterval(serializers.Serializer):
    estimate = serializers.FloatField(help_text="the mean")
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField(help_text="the values the interval is over: matches, or deals in a duplicate event")
    method = serializers.CharField(help_text="t-per-match, or t-per-deal in a duplicate event (low and high are null below 2 values)")


class TournamentStandingRow(serializers.Serializer):
    place = serializers.IntegerField(help_text="1-based; entries level on points per match, score margin and head-to-head share a place")
    entry = serializers.IntegerField(help_text="the entry's index in the field")
    bot = serializers.IntegerField()
    name = serializers.CharField(help_text="the bot and its frozen version")
    matches = serializers.IntegerField(help_text="finished matches the entry played")
    points = serializers.FloatField(help_text="points from ranks: (k - place) / (k - 1) a match at a table of k")
    points_per_match = serializers.FloatField(help_text="what the table is ordered by first")
    score_margin = serializers.FloatField(help_text="per match: the entry's score minus the mean of the others' at its table (negated in Allegra)")
    head_to_head = serializers.IntegerField(help_text="among the entries level with it: +1 for each it finished ahead of, -1 behind")
    wins = serializers.IntegerField(
        help_text="matches in which the entry finished first (rank 1), a first place shared with others included: "
        "two level on top of a table are one win each; a forfeit is never a win"
    )
    forfeits = serializers.IntegerField(help_text="matches in which the entry forfeited")
    ci95 = StandingInterval(help_text="95% interval of points per match")
    adjusted = serializers.DictField(
        required=False,
        help_text="luck-adjusted: {points_per_match, matches_adjusted (of matches, those whose luck is known; the others count their plain points), ci95}",
    )


class TournamentCrosstablePage(serializers.Serializer):
    entries = serializers.ListField(child=serializers.IntegerField(), help_text="the column of each cell: entry indices 0..N-1")
    rows = serializers.ListField(child=serializers.IntegerField(), help_text="the entry of each row of this page, in standings order")
    cells = serializers.ListField(
        child=serializers.ListField(child=serializers.DictField(allow_null=True)), allow_null=True,
        help_text="cells[i][b]: {games, score} of rows[i] against entry b (score: 1 a match it finished ahead, 1/2 level); "
        "null on the diagonal and for two who never met; null for fields of more than 64 entries",
    )  # fmt: skip
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    rows_per_page = serializers.IntegerField()


class TournamentStandingsOutput(serializers.Serializer):
    tournament = serializers.IntegerField()
    progress = TournamentProgress()
    game = serializers.CharField()
    matches_played = serializers.IntegerField(help_text="finished matches the standings count")
    results_counted = serializers.IntegerField(help_text="results (finished or failed matches) the stored standings were computed from")
    computed = serializers.DateTimeField(allow_null=True, help_text="when the standings were computed (as results came in)")
    points_table = serializers.CharField()
    standings = TournamentStandingRow(many=True)
    crosstable = TournamentCrosstablePage()
    differences = serializers.ListField(child=serializers.DictField(), required=False, help_text="fields of up to 64: a 95% interval of a minus b for every pair")
    deals = serializers.DictField(required=False, help_text="duplicate events: each entry's mean rank by deal against the field's")
    decided_by = serializers.CharField(required=False, help_text="plain or adjusted: which points per match order the table first")
    value_functions = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="the luck estimator's value function(s), NAME@VERSION, of the adjusted figures"
    )
    adjusted_differences = serializers.ListField(child=serializers.DictField(), required=False, help_text="as differences, over the luck-adjusted points")


# -- casual matches: the human seat (docs/api.md, POST /api/play/; decisions 130-136) ------


@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": "^builtin:[a-z0-9_]+$"}]})
class OpponentField(serializers.Field):
    """A bot id, or "builtin:NAME" (the service checks that it names an active bot of the game)."""

    def to_internal_value(self, data):
        if (type(data) is int and data >= 1) or (isinstance(data, str) and data.startswith("builtin:")):
            return data
        raise serializers.ValidationError('an opponent is a bot id (a whole number from 1) or "builtin:NAME"')

    def to_representation(self, value):
        return value


class PlayInput(serializers.Serializer):
    game = serializers.ChoiceField(choices=GAME_CHOICES)
    num_players = serializers.IntegerField(min_value=2, max_value=6)
    opponents = serializers.ListField(
        child=OpponentField(), min_length=1, max_length=5,
        help_text='the bots in the other seats, in seat order: bot ids (active, of the game) or "builtin:NAME"',
    )  # fmt: skip
    seat = serializers.IntegerField(min_value=0, max_value=5, required=False, help_text="your seat (default: a random one)")


class PlayCreatedOutput(serializers.Serializer):
    id = serializers.IntegerField(help_text="the match's id: GET /api/play/{id}/ follows it, /api/matches/{id}/replay/ is its replay once finished")


class PlayListOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Match.Status.choices)
    game = serializers.CharField()
    num_players = serializers.IntegerField()
    seat = serializers.IntegerField(source="casual_seat.seat", help_text="your seat")
    created = serializers.DateTimeField()
    finished = serializers.DateTimeField(allow_null=True)


class PlayForfeitOutput(serializers.Serializer):
    reason = serializers.CharField()
    detail = serializers.CharField()


class PlayPlayerOutput(serializers.Serializer):
    seat = serializers.IntegerField()
    name = serializers.CharField(help_text="the person's username, or the bot's name")
    bot = serializers.IntegerField(allow_null=True, help_text="the bot's id (null for the person)")
    version = serializers.IntegerField(allow_null=True)
    human = serializers.BooleanField()


class PlayOutput(serializers.Serializer):
    status = serializers.ChoiceField(choices=Match.Status.choices, help_text="the match's status")
    seat = serializers.IntegerField(help_text="the person's seat")
    message = serializers.JSONField(
        allow_null=True,
        help_text="exactly the protocol v1 message a bot in this seat would be sent now ('act' awaiting an answer, "
        "or 'end'); null while others act, while the answer is being played, and for a forfeited seat",
    )
    decision = serializers.IntegerField(
        help_text="how many messages the seat has been sent: an answer may name the decision it answers (a stale one is a 409)"
    )
    move_deadline = serializers.DateTimeField(allow_null=True, help_text="when the awaited move forfeits on time")
    move_time_left_ms = serializers.IntegerField(allow_null=True)
    idle_forfeit_seconds = serializers.IntegerField(help_text="a seat no page asks for this long forfeits (poll GET more often)")
    forfeit = PlayForfeitOutput(allow_null=True, help_text="why the person's seat forfeited (then the default policy plays it)")
    score = serializers.IntegerField(allow_null=True)
    rank = serializers.IntegerField(allow_null=True)
    game = serializers.CharField()
    num_players = serializers.IntegerField()
    players = PlayPlayerOutput(many=True)


class PlayActionInput(serializers.Serializer):
    """Documents the body; the view reads it with the bounded reply parse."""

    action = serializers.DictField(help_text="one action object, exactly as a bot answers it (protocol v1)")
    decision = serializers.IntegerField(min_value=1, required=False, help_text="the decision it answers (GET gives it)")


class PlayActionOutput(serializers.Serializer):
    decision = serializers.IntegerField(help_text="the decision answered")
    status = serializers.CharField(help_text='"accepted": the worker plays it next')
