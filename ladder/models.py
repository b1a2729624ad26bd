"""The ladder's data. Writes go through ladder.services, reads through
ladder.selectors; models hold fields, constraints and tiny helpers only."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils import timezone

import engine
from cardroom.runtimes import DEFAULT_RUNTIME, RUNTIMES

GAME_CHOICES = engine.game_choices()

ELO_START = Decimal("1500.00")


class Bot(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bots")
    game = models.CharField(max_length=16, choices=GAME_CHOICES)
    name = models.CharField(max_length=40)
    description = models.TextField(blank=True, max_length=2000)
    builtin = models.BooleanField(default=False, help_text="one of cardroom's own bots")
    # The version that plays on the ladders now (the newest active one).
    current_version = models.ForeignKey(
        "BotVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created = models.DateTimeField(auto_now_add=True)
    # Set while the bot is withdrawn from its game's ladders: it keeps its
    # history, leaves the current standings and is never matched.
    withdrawn = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "name"], name="bot_name_unique_per_game"),
            # "Greedy" may not sit beside the built-in "greedy" (bot names are ASCII: Lower() is exact on SQLite too).
            models.UniqueConstraint(Lower("name"), "game", name="bot_name_unique_per_game_ci"),
        ]
        ordering = ["game", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.game})"


class BotVersion(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        VALIDATING = "validating"
        ACTIVE = "active"
        FAILED = "failed"
        RETIRED = "retired"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    package = models.FileField(upload_to="bots/%Y/%m/")
    filename = models.CharField(max_length=200)
    sha256 = models.CharField(max_length=64, db_index=True)
    size = models.PositiveIntegerField()
    # How the package runs (docs/runtimes.md), read from it at upload.
    runtime = models.CharField(max_length=8, choices=[(r, r) for r in RUNTIMES], default=DEFAULT_RUNTIME)
    # What the upload's checks did for the author (set the entry's executable
    # bit), one line each; the validation log starts with them.
    upload_notes = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING, db_index=True)
    validation_log = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    activated = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bot", "number"], name="version_number_unique_per_bot")]
        ordering = ["bot", "-number"]

    def __str__(self) -> str:
        return f"{self.bot.name} v{self.number}"


class Ladder(models.Model):
    name = models.CharField(max_length=80, unique=True)
    game = models.CharField(max_length=16, choices=GAME_CHOICES)
    players_per_match = models.PositiveSmallIntegerField()
    options = models.JSONField(default=dict, blank=True)
    startup_ms = models.PositiveIntegerField(default=10_000)
    per_move_ms = models.PositiveIntegerField(default=1_000)
    overage_ms = models.PositiveIntegerField(default=10_000)
    total_ms = models.PositiveIntegerField(default=300_000)
    active = models.BooleanField(default=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "players_per_match", "name"]

    def __str__(self) -> str:
        return self.name


class Rating(models.Model):
    """A bot's standing on one ladder (across its versions)."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="ratings")
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="ratings")
    elo = models.DecimalField(max_digits=9, decimal_places=2, default=ELO_START)
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField(db_index=True, help_text="OpenSkill's conservative estimate, mu - 3 sigma")
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    forfeits = models.PositiveIntegerField(default=0)
    provisional = models.BooleanField(default=True)
    # The version that played this bot's last rated game here; a different
    # version in the next game takes over (see ladder.services.ratings).
    version = models.ForeignKey("BotVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Games since the current version took over (provisional K counts these).
    version_games = models.PositiveIntegerField(default=0)
    last_played = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ladder", "bot"], name="one_rating_per_ladder_and_bot")]
        # The standings order, whole: a deep page needs no sort.
        indexes = [models.Index(fields=["ladder", "-elo", "-ordinal", "bot"], name="rating_standings_order")]


class DuplicateSet(models.Model):
    """A pairing on a ladder played as the rotations of one deal
    (ladder.services.duplicate_sets, decision 255): one Match per seat
    rotation, all with the deal's seed and its per-kind chance streams, the
    seats shifted by 0..k-1 as an event's duplicate table shifts them. Each
    rotation is an ordinary ladder match (claimed, played, rated by Elo on
    its own); the whole set is one result of the adjusted rating."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="duplicate_sets")
    rotations = models.PositiveSmallIntegerField()
    created = models.DateTimeField(auto_now_add=True)


class Match(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class Kind(models.TextChoices):
        LADDER = "ladder"
        VALIDATION = "validation"
        TOURNAMENT = "tournament"
        # A person plays one seat (CasualSeat) against bots: never rated,
        # never in standings or the match lists (decision 130).
        CASUAL = "casual"

    class ErrorKind(models.TextChoices):
        """What kind of platform failure stopped a match (``error_kind``;
        the status page counts them by kind)."""

        # the sandbox is unusable, or refuses (uploaded bots unsandboxed)
        SANDBOX = "sandbox"
        # a bot process could not even be started (fork, interpreter, a
        # stored package that no longer loads)
        BOT_START = "bot_start"
        # the database went away while the match was played or recorded
        DATABASE = "database"
        # the reaper took the match from a worker that is alive (its heartbeat
        # beat after the lease lapsed) but stopped renewing the lease: a stuck
        # match, an overrun time control
        LEASE_EXPIRED = "lease_expired"
        # the reaper took the match from a worker whose heartbeat had stopped
        # too: killed, frozen, its machine lost or cut off
        WORKER_LOST = "worker_lost"
        # the match passed its wall-clock ceiling with no bot at fault
        # (cardroom.ceiling): the machine or the platform was too slow
        CEILING = "ceiling"
        # anything else (a bug)
        INTERNAL = "internal"

    ladder = models.ForeignKey(Ladder, null=True, blank=True, on_delete=models.PROTECT, related_name="matches")
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.LADDER)
    game = models.CharField(max_length=16, choices=GAME_CHOICES)
    options = models.JSONField(default=dict, blank=True)
    num_players = models.PositiveSmallIntegerField()
    seed = models.BigIntegerField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    # Who runs it now and until when: the lease is renewed while it runs; a
    # lapsed lease means the worker is gone and the reaper re-queues the match.
    lease_token = models.CharField(max_length=64, blank=True)
    lease_expires = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True, help_text="the last platform failure (never a bot's)")
    # What kind of platform failure that was (sandbox, database, lease, worker, …), for the status page.
    error_kind = models.CharField(max_length=32, blank=True, db_index=True)
    replay = models.FileField(upload_to="replays/%Y/%m/", blank=True)
    num_events = models.PositiveIntegerField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    # When a task message for it was last sent: a queued match whose message
    # was lost (a broker restart) is sent again after a while.
    enqueued = models.DateTimeField(null=True, blank=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True, db_index=True)
    validation_of = models.ForeignKey(
        BotVersion, null=True, blank=True, on_delete=models.CASCADE, related_name="validation_matches"
    )
    # The order in which rated matches' ratings were applied (ascending; not
    # dense): the first id of its RatingChange rows. Null for a match not rated.
    rating_sequence = models.BigIntegerField(null=True, blank=True)
    # A rotation of a duplicate set (its deal's seed is shown, and its replay
    # served, only once no rotation of the set is queued or running).
    duplicate_set = models.ForeignKey(
        DuplicateSet, null=True, blank=True, on_delete=models.SET_NULL, related_name="matches"
    )
    set_rotation = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["status", "lease_expires"], name="match_status_lease"),
            models.Index(fields=["ladder", "status", "-id"], name="match_ladder_status"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["validation", "tournament", "casual"]) | Q(ladder__isnull=False), name="ladder_match_has_ladder"
            )
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.game}, {self.status})"


class Participant(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="participants")
    seat = models.PositiveSmallIntegerField()
    bot = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="participations")
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="participations")
    score = models.IntegerField(null=True, blank=True)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    forfeit_reason = models.CharField(max_length=32, blank=True)
    forfeit_event = models.PositiveIntegerField(null=True, blank=True)
    forfeit_detail = models.TextField(blank=True)
    log = models.FileField(upload_to="logs/%Y/%m/", blank=True)
    log_size = models.PositiveIntegerField(default=0)
    elo_before = models.DecimalField(max_digits=9, decimal_places=2, null=True, blank=True)
    elo_after = models.DecimalField(max_digits=9, decimal_places=2, null=True, blank=True)
    mu_before = models.FloatField(null=True, blank=True)
    mu_after = models.FloatField(null=True, blank=True)
    sigma_before = models.FloatField(null=True, blank=True)
    sigma_after = models.FloatField(null=True, blank=True)
    # The worker time this seat is charged (ladder.services.fairshare): its
    # own thinking plus its part of the rest of the match.
    worker_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["match", "seat"]
        constraints = [models.UniqueConstraint(fields=["match", "seat"], name="one_participant_per_seat")]
        indexes = [models.Index(fields=["bot", "-match"], name="participant_bot_match")]


class CasualSeat(models.Model):
    """The human seat of a casual match, and the exchange with the worker
    that plays the match (ladder.services.casual, decisions 130-136): the
    worker publishes each protocol message here and waits for the answer
    the person's browser posts. The other seats are Participants."""

    match = models.OneToOneField(Match, primary_key=True, on_delete=models.CASCADE, related_name="casual_seat")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="casual_seats")
    seat = models.PositiveSmallIntegerField()
    # How many messages the worker has published to the seat (act, then end):
    # an answer names the decision it answers (decision 133).
    decision = models.PositiveIntegerField(default=0)
    # The protocol line the seat is sent now (an act awaiting its answer, or
    # the end), exactly as a bot would read it; blank while others act.
    message = models.TextField(blank=True)
    # The match's events so far (chance events included: never served), from
    # which an answer's legality is judged by the engine.
    events = models.JSONField(default=list, blank=True)
    # The accepted answer to ``decision``, until the worker takes it.
    answer = models.JSONField(null=True, blank=True)
    move_deadline = models.DateTimeField(null=True, blank=True)
    # The last time the owner's page asked for the seat (the idle forfeit's clock).
    last_poll = models.DateTimeField(default=timezone.now)
    score = models.IntegerField(null=True, blank=True)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    forfeit_reason = models.CharField(max_length=32, blank=True)
    forfeit_detail = models.TextField(blank=True)
    # Whose network the match was started from, as a keyed digest (never
    # the address itself): the per-address limit and the fair order count
    # by it (ladder.services.casual.address_key, decision 204).
    address_key = models.CharField(max_length=32, blank=True, db_index=True)


class RatingChange(models.Model):
    """Append-only history: one row per rated participant, in the order the
    results were committed (``id``). recompute_ratings replays it."""

    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="changes")
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="rating_changes")
    participant = models.OneToOneField(Participant, on_delete=models.CASCADE, related_name="rating_change")
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    elo_before = models.DecimalField(max_digits=9, decimal_places=2)
    elo_after = models.DecimalField(max_digits=9, decimal_places=2)
    mu_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_before = models.FloatField()
    sigma_after = models.FloatField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["rating", "id"], name="ratingchange_rating")]


class MatchLuck(models.Model):
    """The luck chance gave each seat of a rated ladder match, from its
    replay (cardroom.luck, docs/luck.md), kept beside the plain result:
    ``adjusted = payoff - luck`` per seat, the payoff being the seat's rank
    points. Written after the result is committed (ladder.services.luck);
    a match without a row, or with ``error`` set, counts plainly."""

    match = models.OneToOneField(Match, primary_key=True, on_delete=models.CASCADE, related_name="luck")
    # The value function's NAME@VERSION: an adjusted figure is comparable
    # only with figures of the same one (decision 184).
    value_function = models.CharField(max_length=40, blank=True)
    # Each seat's luck, in seat order; null when it could not be computed.
    luck = models.JSONField(null=True, blank=True)
    # Why it could not be computed (the match stays rated plainly).
    error = models.CharField(max_length=500, blank=True)
    computed = models.DateTimeField(auto_now_add=True)
    compute_ms = models.PositiveIntegerField(default=0)


class AdjustedRanking(models.Model):
    """A ladder's luck-adjusted ranking as last computed
    (ladder.services.adjusted): ``ladder.ranking.rank`` over the ladder's
    rated matches, the adjusted payoffs where the luck is known. Recomputed
    periodically when new results or luck came in, never on a request."""

    ladder = models.OneToOneField(Ladder, primary_key=True, on_delete=models.CASCADE, related_name="adjusted_ranking")
    model = models.CharField(max_length=40)  # ladder.ranking.MODEL, NAME@N
    # The value functions of the luck counted in (NAME@VERSION each).
    value_functions = models.JSONField(default=list)
    matches = models.PositiveIntegerField(default=0)  # the rated matches counted
    adjusted_matches = models.PositiveIntegerField(default=0)  # of which with their luck taken out
    # How many rated matches and luck rows the ladder had when it was
    # computed: a change in either means the ranking is behind.
    rated_matches = models.PositiveIntegerField(default=0)
    luck_rows = models.PositiveIntegerField(default=0)
    # The median matches of the versions whose place is settled (null while
    # none is): about what a version new to the ladder needs.
    settle_matches = models.PositiveIntegerField(null=True, blank=True)
    computed = models.DateTimeField(null=True, blank=True)
    compute_ms = models.PositiveIntegerField(default=0)


class AdjustedRating(models.Model):
    """One version's place in its ladder's AdjustedRanking (ladder.ranking.Rank)."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="adjusted_ratings")
    version = models.ForeignKey(BotVersion, on_delete=models.CASCADE, related_name="adjusted_ratings")
    rating = models.FloatField()
    low = models.FloatField()
    high = models.FloatField()
    matches = models.PositiveIntegerField()
    place = models.PositiveIntegerField()
    settled = models.BooleanField()
    more_matches = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ladder", "version"], name="one_adjusted_rating_per_ladder_and_version")]


class WorkerHeartbeat(models.Model):
    """Each worker process says it is alive (and what it is playing) here,
    for the operator's status page."""

    name = models.CharField(max_length=200, unique=True)
    hostname = models.CharField(max_length=200)
    pid = models.PositiveIntegerField()
    started = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)
    current_match = models.ForeignKey(Match, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    matches_done = models.PositiveIntegerField(default=0)
    sandbox = models.CharField(max_length=200, blank=True)  # mode and the limits in force

    class Meta:
        ordering = ["name"]


class UsernameClaim(models.Model):
    """The forms of a username no other account may take (ladder.services.accounts):
    NFKC case-folded, and its look-alike skeleton. Unique in the database,
    on PostgreSQL and SQLite alike (SQLite's lower() only knows ASCII)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="username_claim")
    folded = models.CharField(max_length=600, unique=True)
    skeleton = models.CharField(max_length=600, unique=True)

    def __str__(self) -> str:
        return self.folded


class VerifiedEmail(models.Model):
    """The address a user proved to read (a signed link sent there,
    ladder.services.account_email): only while it is still the user's
    e-mail address does a password reset go to it."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="verified_email")
    email = models.EmailField(max_length=254)
    verified = models.DateTimeField()

    def __str__(self) -> str:
        return self.email


class Tournament(models.Model):
    """An event: a fixed field of frozen bot versions, a schedule fixed by its
    spec and seed (cardroom.tournament), and its matches (TournamentMatch)."""

    class Format(models.TextChoices):
        ROUND_ROBIN = "round-robin"
        SWISS = "swiss"
        DUPLICATE = "duplicate"

    class Status(models.TextChoices):
        # Taking entries until ``starts`` (an open event); then its schedule is drawn.
        OPEN = "open"
        RUNNING = "running"
        PAUSED = "paused"
        FINISHED = "finished"
        CANCELLED = "cancelled"

    name = models.CharField(max_length=80, unique=True)
    game = models.CharField(max_length=16, choices=GAME_CHOICES)
    format = models.CharField(max_length=16, choices=Format.choices)
    table_size = models.PositiveSmallIntegerField()
    deals = models.PositiveIntegerField()
    rounds = models.PositiveIntegerField(null=True, blank=True, help_text="asked for (Swiss, or a balanced round-robin)")
    seed = models.BigIntegerField()
    options = models.JSONField(default=dict, blank=True)
    startup_ms = models.PositiveIntegerField(default=10_000)
    per_move_ms = models.PositiveIntegerField(default=1_000)
    overage_ms = models.PositiveIntegerField(default=10_000)
    total_ms = models.PositiveIntegerField(default=300_000)
    # An open event: the entry window closes, and the schedule is drawn, at
    # ``starts`` (ladder.services.tournaments.start_due); null for an event
    # whose field staff picked at creation.
    starts = models.DateTimeField(null=True, blank=True, db_index=True)
    # Entries one user's bots may hold in an open event.
    entries_per_user = models.PositiveSmallIntegerField(default=1)
    started = models.DateTimeField(null=True, blank=True)
    # Why an open event was cancelled at its start (too few entries, a schedule too large).
    cancelled_reason = models.CharField(max_length=300, blank=True)
    # What the schedule came out as: complete, balanced or swiss; its rounds
    # (blank and 0 while an open event takes entries).
    pairing = models.CharField(max_length=12)
    num_rounds = models.PositiveIntegerField()
    total_matches = models.PositiveIntegerField()
    # Batches scheduled so far (a Swiss round is a batch; other formats have one).
    batches_scheduled = models.PositiveIntegerField(default=0)
    # Matches of the event done (finished or failed) so far: counted in the
    # transaction that records each; TournamentStandings says how many of them
    # its document counts.
    results_recorded = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RUNNING, db_index=True)
    # What orders the final table: plain points per match, or the points with
    # the luck of the cards taken out (cardroom.luck); the organizer's choice.
    decided_by = models.CharField(max_length=8, choices=[("plain", "plain"), ("adjusted", "adjusted")], default="plain")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created = models.DateTimeField(auto_now_add=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.name


class TournamentEntry(models.Model):
    """One entry of the field: a bot with the version frozen at creation, or
    (an open event) at entry, until the window closes. ``index`` is the
    entry's place in the field, renumbered 0..N-1 in entry order when an open
    event starts."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    index = models.PositiveIntegerField()
    bot = models.ForeignKey(Bot, on_delete=models.PROTECT, related_name="tournament_entries")
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="+")
    entered = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["tournament", "index"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "index"], name="one_entry_per_index"),
            models.UniqueConstraint(fields=["tournament", "bot"], name="one_entry_per_bot"),
        ]


class TournamentStandings(models.Model):
    """An event's standings document (cardroom.tournament.standings, as the
    API serves it), computed when results come in
    (ladder.services.tournaments.refresh_standings), never on a request."""

    tournament = models.OneToOneField(Tournament, primary_key=True, on_delete=models.CASCADE, related_name="stored_standings")
    document = models.JSONField(default=dict)
    # The event's results_recorded when the document was computed.
    results = models.PositiveIntegerField(default=0)
    computed = models.DateTimeField(null=True, blank=True)
    compute_ms = models.PositiveIntegerField(default=0)
    # No refresh starts before this: the spacing after the last one, or a
    # refresh under way (its claim).
    not_before = models.DateTimeField(null=True, blank=True)


class TournamentStandingsPage(models.Model):
    """One page of the API's standings answer, rendered as JSON when the
    standings are stored (ladder.selectors.standings_pages): all of the
    answer but the event's id and its live progress, which the view puts in
    front of these bytes. A request serializes nothing big."""

    standings = models.ForeignKey(TournamentStandings, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField()
    body = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["standings", "number"], name="one_standings_page_per_number")]


class TournamentMatch(models.Model):
    """Where a match sits in its event's schedule (cardroom.tournament.MatchPlan)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="schedule")
    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="tournament_slot")
    number = models.PositiveIntegerField()
    round = models.PositiveIntegerField()
    table = models.PositiveIntegerField()
    deal = models.PositiveIntegerField()
    rotation = models.PositiveSmallIntegerField()
    seats = models.JSONField(help_text="entry index by seat")
    keyed_chance = models.BooleanField(default=False, help_text="duplicate: one chance stream per kind")
    # The match's luck (cardroom.luck), computed from its replay when it is
    # recorded: {"value_function": NAME@VERSION, "luck": [...], "adjusted": [...]}
    # by seat; null when not known (not finished, or the estimator failed).
    luck = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["tournament", "number"]
        constraints = [models.UniqueConstraint(fields=["tournament", "number"], name="one_match_per_number")]
