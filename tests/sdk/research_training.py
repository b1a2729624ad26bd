"""Checks of what training relies on, run by tests/sdk/test_train.py inside
the venv holding the wheel with its ``research`` extra. ``python
research_training.py SECTION...``; exits non-zero at the first failure."""

from __future__ import annotations

import sys

import numpy as np

from cardroom_sdk.envs import allegory_codec, allegory_v1, allegra_codec, allegra_v1
from cardroom_sdk.envs.gym import SingleSeatEnv

ENVS = {"allegory": (allegory_v1, allegory_codec), "allegra": (allegra_v1, allegra_codec)}


class KeepsItsGame:
    """An opponent that keeps every observation of its game, as a searching
    bot does (ismcts: for sample_world's history), and plays by how many it
    has seen: state carried into the next game changes its moves."""

    def make_choose(self):
        seen: list[dict] = []

        def choose(observation, legal, rng):
            seen.append(observation)
            action = legal[len(seen) % len(legal)]
            if action["type"] == "distribute":  # the template: every chip on one card
                cards = action["cards"]
                return {"type": "distribute", "chips": {cards[len(seen) % len(cards)]: action["total"]}}
            return action

        return choose


def fresh_opponents() -> None:
    """SingleSeatEnv makes its opponents afresh at every reset: a seed's
    episode is the same after other episodes as in a new environment."""

    def episode(env, seed):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _reward, done, _truncated, _info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        return env.aec.replay()["events"]

    for game in ENVS:
        env = SingleSeatEnv(game, num_players=3, seat=0, opponents=KeepsItsGame())
        first = episode(env, 11)
        episode(env, 12)
        assert episode(env, 11) == first == episode(SingleSeatEnv(game, 3, 0, KeepsItsGame()), 11)
        searching = SingleSeatEnv(game, num_players=2, seat=1, opponents="ismcts")
        before = searching.policies[0]
        searching.reset(seed=1)
        assert searching.policies[0] is not before  # a new ismcts, with no history
        print(f"fresh opponents: {game}")


def policy_action() -> None:
    """A policy over indices, asked through the codec's ``policy_action`` on
    each protocol observation (as an exported bot asks it), plays the very
    game it plays through the PettingZoo environment step by step."""
    for game, (module, codec) in ENVS.items():
        for n in (2, 4):
            for seed in range(3):
                weights = np.random.default_rng(seed).normal(size=codec.NUM_ACTIONS)

                def pick(x, mask, weights=weights):
                    # a deterministic policy that depends on the observation array and the mask
                    scores = weights + np.resize(x, len(weights))
                    return int(np.flatnonzero(mask)[np.argmax(scores[mask.astype(bool)])])

                env = module.raw_env(num_players=n)
                env.reset(seed=seed)
                while not env.state.is_terminal():
                    seat = env.agent_name_mapping[env.agent_selection]
                    state = env.state
                    expected = codec.policy_action(state.observation(seat), state.legal_actions(seat), pick)
                    before = len(env.events)
                    while len(env.events) == before:  # (a distribute: one step a chip)
                        ob = env.observe(env.agent_selection)
                        env.step(pick(ob["observation"], ob["action_mask"]))
                    assert env.events[before] == {"by": seat, "action": expected, "ms": 0}, (game, n, seed)
            print(f"policy_action plays as the environment: {game} {n} players")


SECTIONS = {f.__name__: f for f in (fresh_opponents, policy_action)}

if __name__ == "__main__":
    for name in sys.argv[1:] or SECTIONS:
        SECTIONS[name]()
    print("all passed")
