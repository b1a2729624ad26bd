"""Conformance of the research interfaces, run by tests/sdk/test_research_envs.py
inside a fresh venv holding the wheel with its ``research`` extra (pettingzoo,
gymnasium and numpy are not in the dev extra). ``python research_conformance.py
SECTION...``; exits non-zero at the first failure."""

from __future__ import annotations

import random
import sys

import numpy as np

from cardroom_sdk import new_game, sample_world
from cardroom_sdk.envs import allegory_codec, allegory_v1, allegra_codec, allegra_v1
from cardroom_sdk.envs._aec import rank_rewards
from engine import CHANCE
from engine.replay import verify

ENVS = {"allegory": (allegory_v1, allegory_codec), "allegra": (allegra_v1, allegra_codec)}
COUNTS = (2, 3, 4, 6)


def random_positions(game: str, n: int, seed: int, every: int = 1):
    """(state, seat) at the decisions of a random game, every ``every``-th one."""
    rng = random.Random(seed)
    state = new_game(game, n).new_initial_state()
    k = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
            continue
        seat = state.to_act()[0]
        if k % every == 0:
            yield state.clone(), seat
        k += 1
        state.apply(seat, state.random_action(seat, rng))


def pettingzoo_api() -> None:
    from pettingzoo.test import api_test, seed_test

    for game, (module, _codec) in ENVS.items():
        for n in COUNTS:
            api_test(module.env(num_players=n), num_cycles=500)
            seed_test(lambda module=module, n=n: module.env(num_players=n), num_cycles=200)
            print(f"api_test and seed_test: {game} {n} players")


def no_hidden_cards() -> None:
    """Two states that differ only in what a seat cannot see encode alike for
    that seat, mask included; the states themselves do differ."""
    for game, (module, _codec) in ENVS.items():
        for n in COUNTS:
            env = module.raw_env(num_players=n)
            env.reset(seed=n)
            differed = 0
            positions = [p for seed in range(3) for p in random_positions(game, n, seed=100 + seed, every=5)]
            for state, seat in positions:
                obs = state.observation(seat)
                world = sample_world(obs, random.Random(seat))
                if world.observation(None) != state.observation(None):
                    differed += 1
                agent = env.possible_agents[seat]
                env.state = state
                real = env.observe(agent)
                env.state = world
                other = env.observe(agent)
                for key in ("observation", "action_mask"):
                    assert np.array_equal(real[key], other[key]), f"{game} {n}: {key} shows a hidden card"
                assert real["action_mask"].any()
            assert differed > 10, f"{game} {n}: the sampled worlds never differed ({differed})"
            print(f"no hidden card: {game} {n} players ({differed} positions with other hidden cards)")


def action_mapping() -> None:
    """Every legal action of many real positions goes to an index and back
    unchanged, the mask holds exactly those indices, and an Allegory
    distribute played chip by chip is the action sent."""
    for game, (module, codec) in ENVS.items():
        for n in COUNTS:
            positions = 0
            for seed in range(12):
                for state, seat in random_positions(game, n, seed=seed, every=3):
                    obs = state.observation(seat)
                    legal = state.legal_actions(seat)
                    if legal[0]["type"] == "distribute":
                        check_distribute(module, state, seat, random.Random(seed))
                        continue
                    indices = [codec.protocol_to_action(obs, a) for a in legal]
                    assert len(set(indices)) == len(legal), f"{game}: two actions share an index"
                    for index, action in zip(indices, legal):
                        assert 0 <= index < codec.NUM_ACTIONS
                        assert codec.action_to_protocol(obs, index) == action, (index, action)
                    mask = codec.action_mask(obs, legal)
                    assert set(np.flatnonzero(mask)) == set(indices)
                    positions += 1
            print(f"action mapping: {game} {n} players, {positions} positions")


def check_distribute(module, state, seat: int, rng: random.Random) -> None:
    env = module.raw_env(num_players=state.num_players)
    env.reset(seed=0)
    env.state = state.clone()
    obs = state.observation(seat)
    template = state.legal_actions(seat)[0]
    chips: dict[str, int] = {}
    for name in rng.choices(template["cards"], k=template["total"]):
        chips[name] = chips.get(name, 0) + 1
    indices = allegory_codec.protocol_to_actions(obs, {"type": "distribute", "chips": chips})
    assert len(indices) == template["total"]
    agent = env.possible_agents[seat]
    sent = [env.protocol_action(agent, i) for i in indices]
    assert sent[:-1] == [None] * (len(indices) - 1) and sent[-1] == {"type": "distribute", "chips": chips}, sent


def agreement(games: int = 1000) -> None:
    """Random games driven through PettingZoo end as the engine ends them on
    the same seeds (chance from random.Random(seed), the same decisions), and
    their replays verify."""
    played = 0
    for k in range(games):
        game = ("allegory", "allegra")[k % 2]
        n = COUNTS[(k // 2) % len(COUNTS)]
        module, _codec = ENVS[game]
        env = module.env(num_players=n)
        env.reset(seed=k)
        pick = np.random.default_rng(k)
        final = {}
        for agent in env.agent_iter():
            obs, reward, done, truncated, _info = env.last()
            if done or truncated:
                final[agent] = reward
                env.step(None)
                continue
            env.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
        raw = env.unwrapped
        rewards = [final[a] for a in raw.possible_agents]
        doc = raw.replay()
        # the engine alone: chance events drawn from the seed, the decisions the env sent
        decisions = [e for e in doc["events"] if e["by"] != CHANCE]
        rng = random.Random(k)
        state = new_game(game, n).new_initial_state()
        for event in decisions:
            while state.is_chance_node():
                state.apply_chance(state.sample_chance(rng))
            state.apply(event["by"], event["action"])
        assert state.is_terminal(), f"game {k}: the engine's game did not end"
        result = state.result()
        assert result.as_dict() == doc["result"], (k, result, doc["result"])
        assert verify(doc).result == result
        assert rewards == rank_rewards(result.ranks), (k, rewards, result.ranks)
        played += 1
    print(f"agreement: {played} games")


def gymnasium_wrapper() -> None:
    from gymnasium.utils.env_checker import check_env

    from cardroom_sdk.envs.gym import SingleSeatEnv

    for game in ENVS:
        for n, opponents in ((2, "greedy"), (3, "random"), (4, "greedy")):
            env = SingleSeatEnv(game, num_players=n, seat=n - 1, opponents=opponents)
            check_env(env, skip_render_check=True)
            obs, _ = env.reset(seed=5)
            pick = np.random.default_rng(5)
            done = False
            while not done:
                obs, reward, done, _truncated, info = env.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
                assert "illegal" not in info
            assert reward == rank_rewards(env.aec.state.result().ranks)[n - 1]
            print(f"gymnasium check_env: {game} {n} players against {opponents}")


SECTIONS = {f.__name__: f for f in (pettingzoo_api, no_hidden_cards, action_mapping, agreement, gymnasium_wrapper)}

if __name__ == "__main__":
    for name in sys.argv[1:] or SECTIONS:
        SECTIONS[name]()
    print("all passed")
