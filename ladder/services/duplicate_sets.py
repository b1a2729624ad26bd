"""Duplicate sets on the ladder (docs/ladder.md, "Duplicate sets"; decision 255).

Where measurement says they help (CARDROOM_DUPLICATE_SETS, by game and
player count), matchmaking plays a pairing as the k rotations of one deal:
k ladder matches with the same seed, dealt from the deal's per-kind chance
streams (cardroom.tournament.seeds.KeyedChance, as an event's duplicate
deal), the seats shifted by 0..k-1 (cardroom.tournament.schedule.rotate),
so every bot plays every seat of the same cards.

Each rotation is an ordinary ladder match: claimed under a lease, played,
recorded once, rated by Elo on its own (a worker killed mid-set loses only
its rotation's attempt; a rotation that fails for good, or is cancelled,
leaves the rest of the set to be played and rated). Fair shares charge
each rotation as the match it is. For the adjusted rating a set whose
every rotation was rated is one result (ladder.selectors.outcomes: each
bot's payoff the mean over the rotations, standing for k matches); a set
with a rotation not rated counts its rated rotations one by one, so
nothing is lost and nothing counted twice.

Hidden information: the rotations share the deal, so a rotation's seed
and replay are shown only once none of its set is queued or running
(ladder.selectors.duplicate_sets.deal_published); the bots of one rotation share nothing with another's
(each runs in its own sandbox, issue 35), and the versions are fixed when
the set is created.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from django.conf import settings

from cardroom.tournament.schedule import rotate
from ladder.models import BotVersion, DuplicateSet, Ladder, Match
from ladder.services.matches import create_match


def plays_sets(game: str, players: int) -> bool:
    """Whether the ladders of this game and player count play duplicate sets
    (CARDROOM_DUPLICATE_SETS: "GAME:PLAYERS" items, decision 255)."""
    return f"{game}:{players}" in set(settings.CARDROOM_DUPLICATE_SETS)


def rotations_for(ladder: Ladder) -> int:
    """Matches a pairing is played as on this ladder: k (a set) or 1."""
    return ladder.players_per_match if plays_sets(ladder.game, ladder.players_per_match) else 1


def create_set(ladder: Ladder, versions: Sequence[BotVersion]) -> list[Match]:
    """Queue one deal in every seat rotation of ``versions`` (rotation 0's
    seat order): one DuplicateSet, k matches with the deal's one seed."""
    # The seed from secrets, as every match's (a Mersenne Twister's later
    # outputs follow from its earlier ones, and a finished set publishes it).
    seed = secrets.randbelow(2**62)
    dup = DuplicateSet.objects.create(ladder=ladder, rotations=len(versions))
    return [
        create_match(ladder=ladder, versions=list(rotate(versions, r)), seed=seed, duplicate_set=dup, set_rotation=r)
        for r in range(len(versions))
    ]
