"""API representations. Input serializers only check shapes; the services
decide everything else."""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from ladder.models import GAME_CHOICES, Bot, BotVersion, Ladder, Match, Participant, Rating


class RegisterInput(serializers.Serializer):
    username = serializers.RegexField(r"^[A-Za-z0-9_.@+-]{3,40}$", max_length=40, error_messages={
        "invalid": "a username is 3-40 characters: letters, digits and _ . @ + -"
    })
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


class StandingOutput(serializers.ModelSerializer):
    rank = serializers.IntegerField(help_text="1-based position by Elo")
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    owner = serializers.CharField(source="bot.owner.username")
    elo = serializers.DecimalField(max_digits=9, decimal_places=2)
    openskill_ordinal = serializers.FloatField(source="ordinal")
    win_rate = serializers.FloatField(allow_null=True)

    class Meta:
        model = Rating
        fields = ["rank", "bot", "bot_name", "owner", "elo", "openskill_ordinal", "mu", "sigma", "games", "wins", "win_rate", "forfeits", "provisional"]


class BotInput(serializers.Serializer):
    game = serializers.ChoiceField(choices=GAME_CHOICES)
    name = serializers.CharField(max_length=40)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class BotOutput(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username")
    current_version = serializers.IntegerField(source="current_version.number", allow_null=True, default=None)

    class Meta:
        model = Bot
        fields = ["id", "name", "game", "owner", "description", "builtin", "current_version", "created"]


class VersionInput(serializers.Serializer):
    # max_length: the name is kept in BotVersion.filename (200 characters).
    file = serializers.FileField(
        max_length=200,
        allow_empty_file=True,  # the service says "the file is empty", naming the file
        help_text="a .py file, or a .zip / .tar.gz with a manifest (cardroom.toml or bot.json)",
    )


class VersionOutput(serializers.ModelSerializer):
    validation_log = serializers.SerializerMethodField(help_text="shown to the bot's owner only")

    class Meta:
        model = BotVersion
        fields = ["id", "number", "status", "filename", "sha256", "size", "created", "activated", "validation_log"]

    def get_validation_log(self, version: BotVersion) -> str | None:
        user = self.context["request"].user
        return version.validation_log if user.is_authenticated and user.pk == version.bot.owner_id else None


class ParticipantOutput(serializers.ModelSerializer):
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    owner = serializers.CharField(source="bot.owner.username")
    version = serializers.IntegerField(source="version.number")
    forfeit = serializers.SerializerMethodField()
    elo_change = serializers.SerializerMethodField()

    class Meta:
        model = Participant
        fields = ["seat", "bot", "bot_name", "owner", "version", "score", "rank", "forfeit", "elo_before", "elo_after", "elo_change", "mu_before", "mu_after", "sigma_before", "sigma_after"]

    def get_forfeit(self, p: Participant) -> dict | None:
        if not p.forfeit_reason:
            return None
        return {"reason": p.forfeit_reason, "event": p.forfeit_event}

    def get_elo_change(self, p: Participant) -> str | None:
        if p.elo_before is None or p.elo_after is None:
            return None
        return f"{p.elo_after - p.elo_before:+.2f}"


class MatchOutput(serializers.ModelSerializer):
    ladder_name = serializers.CharField(source="ladder.name", allow_null=True, default=None)
    seed = serializers.SerializerMethodField(help_text="the chance seed, once the match is finished (null before)")
    participants = ParticipantOutput(many=True)

    class Meta:
        model = Match
        fields = ["id", "ladder", "ladder_name", "kind", "game", "options", "num_players", "seed", "status", "attempts", "num_events", "created", "started", "finished", "participants"]

    def get_seed(self, match: Match) -> int | None:
        # The seed decides every card: known before the match is played (or
        # while it runs, or before a failed one is re-queued), it would tell
        # a bot's author the deal.
        return match.seed if match.status == Match.Status.FINISHED else None


class ErrorOutput(serializers.Serializer):
    error = serializers.CharField(help_text="what was wrong, for a human")
    field = serializers.CharField(required=False, help_text="the input at fault, where there is one")
