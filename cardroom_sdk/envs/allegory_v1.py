"""Allegory as a PettingZoo AEC environment: ``allegory_v1.env(num_players=4)``.

Observations are dicts with ``observation`` (``allegory_codec.encode`` of the
seat's own observation) and ``action_mask``; actions are
``allegory_codec``'s Discrete indices (docs/sdk.md, "Research interfaces").
"""

from __future__ import annotations

from cardroom_sdk.envs import allegory_codec
from cardroom_sdk.envs._aec import CardroomAEC, wrap


class raw_env(CardroomAEC):  # noqa: N801 (PettingZoo's name)
    metadata = {"render_modes": ["human", "ansi"], "name": "allegory_v1", "is_parallelizable": False}
    game_id = "allegory"
    codec = allegory_codec
    higher_score_wins = True


def env(**kwargs):
    """The wrapped environment (kwargs: num_players, options, reward, render_mode)."""
    return wrap(raw_env(**kwargs))


action_to_protocol = allegory_codec.action_to_protocol
protocol_to_action = allegory_codec.protocol_to_action
