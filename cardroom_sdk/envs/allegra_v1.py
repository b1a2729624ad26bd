"""Allegra as a PettingZoo AEC environment: ``allegra_v1.env(num_players=4)``.

Observations are dicts with ``observation`` (``allegra_codec.encode`` of the
seat's own observation) and ``action_mask``; actions are
``allegra_codec``'s Discrete indices (docs/sdk.md, "Research interfaces").
"""

from __future__ import annotations

from cardroom_sdk.envs import allegra_codec
from cardroom_sdk.envs._aec import CardroomAEC, wrap


class raw_env(CardroomAEC):  # noqa: N801 (PettingZoo's name)
    metadata = {"render_modes": ["human", "ansi"], "name": "allegra_v1", "is_parallelizable": False}
    game_id = "allegra"
    codec = allegra_codec
    higher_score_wins = False


def env(**kwargs):
    """The wrapped environment (kwargs: num_players, options, reward, render_mode)."""
    return wrap(raw_env(**kwargs))


action_to_protocol = allegra_codec.action_to_protocol
protocol_to_action = allegra_codec.protocol_to_action
