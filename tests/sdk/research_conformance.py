"""Conformance of the research interfaces, run by tests/sdk/test_research_envs.py
inside a fresh venv holding the wheel with its ``research`` extra (pettingzoo,
gymnasium, numpy and open_spiel are not in the dev extra). ``python research_conformance.py
SECTION...``; exits non-zero at the first failure."""

from __future__ import annotations

import json
import random
import sys

import numpy as np
from replay_schema import strict_problems  # tests/sdk/replay_schema.py, beside this file

from cardroom_sdk import new_game, sample_world
from cardroom_sdk.envs import allegory_codec, allegory_v1, allegra_codec, allegra_v1
from cardroom_sdk.envs._aec import rank_rewards
from cardroom_sdk.envs._common import decision_step
from cardroom_sdk.envs.batched import BatchedGames
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
    that seat, mask included, in the AEC environment and in a row of the
    batched one; the states themselves do differ."""
    for game, (module, _codec) in ENVS.items():
        for n in COUNTS:
            env = module.raw_env(num_players=n)
            env.reset(seed=n)
            batch = BatchedGames(game, num_envs=2, num_players=n)
            batch.reset(seed=n)
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
                rows = []
                for shown in (state, world):
                    batch.games[1].state = shown
                    batch._show(1)
                    rows.append((batch.observations[1].copy(), batch.action_masks[1].copy(), int(batch.seats[1])))
                assert all(np.array_equal(a, b) for a, b in zip(*rows)), f"{game} {n}: a batch row shows a hidden card"
                assert np.array_equal(rows[0][0], real["observation"]) and rows[0][2] == seat
            assert differed > 10, f"{game} {n}: the sampled worlds never differed ({differed})"
            print(f"no hidden card: {game} {n} players ({differed} positions with other hidden cards)")
    openspiel_no_hidden_cards()


def _openspiel_observers(os_game) -> dict:
    """Every kind of observation the OpenSpiel games offer, made as
    OpenSpiel's tools make them (``make_observation``)."""
    import pyspiel
    from open_spiel.python.observation import make_observation

    kinds = {
        "observation": None,
        "information state": pyspiel.IIGObservationType(perfect_recall=True),
        "public": pyspiel.IIGObservationType(
            public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE
        ),
        "private": pyspiel.IIGObservationType(
            public_info=False, perfect_recall=False, private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER
        ),
    }
    return {name: make_observation(os_game, kind) for name, kind in kinds.items()}


def _openspiel_views(observers: dict, state, seat: int) -> dict:
    views = {}
    for name, observer in observers.items():
        observer.set_from(state, seat)
        views[name] = (observer.string_from(state, seat), observer.tensor.copy())
    return views


def _secret_phase(state) -> bool:
    """An Allegra position where a seat sees what others do not (its own
    knock answer, the held card), checked every time: they are rare."""
    return state.engine_state.observation(None)["phase"] in ("knock", "exchange")


def openspiel_no_hidden_cards() -> None:
    """The OpenSpiel games' observations of a seat (its observation,
    information state, the public and its private observation; string and
    tensor) are the same in every world ``resample_from_infostate`` draws for
    it, worlds whose hidden cards differ; the public one is the same for
    every seat; the information state's tensor recalls what the current
    observation no longer shows."""
    import pyspiel

    for game in ENVS:
        for n in COUNTS:
            os_game = _openspiel_game(game, n)
            observers = _openspiel_observers(os_game)
            rng = np.random.default_rng(1000 + n)
            checked = differed = recalled = 0
            for _ in range(2):
                state = os_game.new_initial_state()
                while not state.is_terminal():
                    if state.is_chance_node() or (rng.random() > 0.15 and not _secret_phase(state)):
                        state.apply_action(int(rng.choice(state.legal_actions())))
                        continue
                    public = {_openspiel_views(observers, state, s)["public"][0] for s in range(n)}
                    assert len(public) == 1, f"{game} {n}: the public observation depends on the seat"
                    for seat in range(n):
                        real = _openspiel_views(observers, state, seat)
                        world = state.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(checked, 0, 1))
                        differed += world.engine_state.observation(None) != state.engine_state.observation(None)
                        other = _openspiel_views(observers, world, seat)
                        for name, (text, tensor) in real.items():
                            assert text == other[name][0], f"{game} {n}: the {name} string shows a hidden card"
                            assert np.array_equal(tensor, other[name][1]), f"{game} {n}: {name} tensor differs"
                        size = len(real["observation"][1])
                        infostate = real["information state"][1]
                        assert np.array_equal(infostate[:size], real["observation"][1])
                        recalled += bool(infostate[size:].any())  # the seat's past, beyond the observation
                        if checked % 7 == 0:  # a copy re-made from its events recalls the same
                            text = pyspiel.serialize_game_and_state(os_game, state)
                            copy = pyspiel.deserialize_game_and_state(text)[1]
                            again = _openspiel_views(observers, copy, seat)["information state"][1]
                            assert np.array_equal(again, infostate), f"{game} {n}: a copy recalls otherwise"
                        checked += 1
                    state.apply_action(int(rng.choice(state.legal_actions())))
            assert differed > checked // 2, f"{game} {n}: the resampled worlds seldom differed ({differed}/{checked})"
            assert recalled > 0, f"{game} {n}: the information state tensor never recalled anything"
            print(f"no hidden card, openspiel: {game} {n} players ({checked} seat views, {differed} other worlds)")


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
                    fast_mapping(codec, obs, legal, every_index=positions % 4 == 0)
                    positions += 1
            print(f"action mapping: {game} {n} players, {positions} positions, fast forms equal")


def _mapped(function, *args):
    try:
        return ["ok", function(*args)]
    except Exception as exc:  # the fast form must refuse as the reference does: the type and the words
        return ["raised", type(exc).__name__, str(exc)]


def _respelled(action: dict) -> list:
    """``action`` spelled in unusual ways a policy might send (slots as
    tuples, bools, floats or strings for ints, keys missing or extra)."""
    spellings = [{**action, "extra": 1}, {k: v for k, v in action.items() if k != "type"}, {**action, "type": "jump"}]
    for key, value in action.items():
        if isinstance(value, list):
            spellings += [{**action, key: tuple(value)}, {**action, key: value[:2]}, {**action, key: [*value[:2], 9]},
                          {**action, key: [True, *value[1:]]}, {**action, key: [float(value[0]), *value[1:]]}]  # fmt: skip
        elif isinstance(value, int):
            spellings += [{**action, key: str(value)}, {**action, key: value + 7}, {**action, key: bool(value)}]
        if key != "type":
            spellings.append({k: v for k, v in action.items() if k != key})
    return spellings


def fast_mapping(codec, obs: dict, legal: list, every_index: bool) -> None:
    """The codecs' ``action_to_protocol_fast`` and ``protocol_to_actions_fast``
    (what the environments step with) answer as the readable reference does:
    for every legal action and unusual spellings of them, and, with
    ``every_index``, for every index."""
    for action in legal:
        for move in [action, *_respelled(action)]:
            fast = _mapped(codec.protocol_to_actions_fast, obs, move)
            assert fast == _mapped(codec.protocol_to_actions, obs, move), (move, fast)
    for index in range(-1, codec.NUM_ACTIONS + 1) if every_index else ():
        fast = _mapped(codec.action_to_protocol_fast, obs, index)
        assert fast == _mapped(codec.action_to_protocol, obs, index), (index, fast)


def _plainly_wrapped(module, n: int):
    """The game under PettingZoo's own standard wrappers, unchanged."""
    from pettingzoo.utils import wrappers

    env = wrappers.TerminateIllegalWrapper(module.raw_env(num_players=n), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(env))


def _outcome(call):
    """What a call gives: its value (arrays compared by bytes), or the kind
    and words of what it raises."""
    try:
        value = call()
    except Exception as exc:  # the same refusal both ways: the type and the words
        return ["raised", type(exc).__name__, str(exc)]
    if isinstance(value, tuple) and value and isinstance(value[0], dict):
        obs = value[0]
        return ["ok", obs["observation"].tobytes(), obs["action_mask"].tobytes(), *value[1:]]
    return ["ok", value]


def wrapper_paths(games: int = 24) -> None:
    """``env()``'s wrappers (short ways for the ordinary step) answer as
    PettingZoo's own wrappers do: the same seeded games through both, with
    illegal, out-of-range and non-int actions, steps without an observation
    first, calls before reset and after the end, compared call by call
    (observations, rewards, terminations, agents, and what is raised)."""
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.suppress_output()  # the warnings of illegal moves and late steps, both ways alike
    for game, (module, codec) in ENVS.items():
        calls = 0
        for k in range(games):
            n = COUNTS[k % len(COUNTS)]
            pair = [module.env(num_players=n), _plainly_wrapped(module, n)]
            early = [
                [_outcome(lambda env=env: env.agent_selection), _outcome(lambda env=env: env.step(0)),
                 _outcome(lambda env=env: env.observe("player_0")), _outcome(lambda env=env: env.last()),
                 _outcome(lambda env=env: list(env.agent_iter()))]
                for env in pair
            ]  # fmt: skip
            assert early[0] == early[1], (game, "before reset", early)
            for env in pair:
                env.reset(seed=k)
            pick = random.Random(k)
            iterators = [iter(env.agent_iter()) for env in pair]
            while True:
                agents = [_outcome(lambda it=it: next(it)) for it in iterators]
                assert agents[0] == agents[1], (game, k, agents)
                if agents[0][0] == "raised":
                    break
                roll = pick.random()
                if roll < 0.05:  # a step without last() or observe() first
                    shown = None
                else:
                    shown = [_outcome(env.last) for env in pair]
                    assert shown[0] == shown[1], (game, k, "last")
                ended = any(pair[0].terminations.values()) or any(pair[0].truncations.values())
                if ended:
                    action = None
                elif roll < 0.08:
                    action = codec.NUM_ACTIONS + pick.randrange(3)  # out of range
                elif roll < 0.11:
                    action = pick.randrange(codec.NUM_ACTIONS)  # most likely illegal
                elif roll < 0.13:
                    action = np.int64(pick.randrange(codec.NUM_ACTIONS))  # not a plain int
                else:
                    mask = pair[0].unwrapped.action_mask(pair[0].unwrapped.agent_name_mapping[agents[0][1]])
                    action = int(pick.choice(np.flatnonzero(mask)))
                stepped = [_outcome(lambda env=env, action=action: env.step(action)) for env in pair]
                assert stepped[0] == stepped[1], (game, k, action, stepped)
                for name in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos", "agents"):
                    assert getattr(pair[0], name) == getattr(pair[1], name), (game, k, name)
                calls += 1
            after = [[_outcome(lambda env=env: env.step(0)), _outcome(lambda env=env: env.agents)] for env in pair]
            assert after[0] == after[1], (game, k, "after the end")
            assert pair[0].unwrapped.replay() == pair[1].unwrapped.replay()
        print(f"wrapper paths: {game}, {games} games, {calls} steps answered as PettingZoo's wrappers answer")


def fast_codecs(games: int = 48) -> None:
    """The differential test of the environments' fast forms: at every step
    of random games through ``env()``, for every seat, the array and mask
    ``observe`` gives (made once a position, masks by ``action_mask_fast``)
    are the readable reference's, ``encode`` and ``action_mask`` of the
    seat's own observation, legal actions and distribute in progress; and an
    array a caller changes does not change what the next ``observe`` gives."""
    for game, (module, codec) in ENVS.items():
        steps = 0
        for k in range(games):
            n = COUNTS[k % len(COUNTS)]
            env = module.env(num_players=n)
            env.reset(seed=1000 + k)
            raw = env.unwrapped
            pick = np.random.default_rng(k)
            for agent in env.agent_iter():
                obs, _reward, done, truncated, _info = env.last()
                if done or truncated:
                    env.step(None)
                    continue
                acting = raw.agent_name_mapping[agent]
                for seat, name in enumerate(raw.possible_agents):
                    seen = raw.state.observation(seat)
                    legal = raw.state.legal_actions(seat) if seat == acting else []
                    pending = raw.pending if seat == acting else None
                    shown = env.observe(name)
                    reference = codec.encode(seen, pending) if pending is not None else codec.encode(seen)
                    assert np.array_equal(shown["observation"], reference), (game, n, k, seat, "observation")
                    assert shown["observation"].dtype == reference.dtype
                    assert np.array_equal(shown["action_mask"], codec.action_mask(seen, legal, pending)), (game, k)
                    assert np.array_equal(codec.action_mask_fast(seen, legal, pending), shown["action_mask"])
                obs["observation"][:] = -1
                obs["action_mask"][:] = 0
                again = env.observe(agent)
                assert again["action_mask"].any() and (again["observation"] != -1).any(), "a caller's change stuck"
                env.step(int(pick.choice(np.flatnonzero(again["action_mask"]))))
                steps += 1
        print(f"fast codecs: {game}, {games} games, {steps} steps, every seat equal to the reference")


def batched_envs(slots: int = 6, games_each: int = 2) -> None:
    """``BatchedGames`` plays what ``env()`` plays: the same seeds and actions
    give, row by row, the same arrays, masks and acting seats, the same
    rewards when a game ends, and the same replays (which pass the strict
    check and verify); an illegal action raises and moves no game."""
    for game, (module, _codec) in ENVS.items():
        for n in COUNTS:
            batch = BatchedGames(game, num_envs=slots, num_players=n, keep_replays=True)
            obs, masks, seats = batch.reset(seed=7 * n)
            envs = [module.env(num_players=n) for _ in range(slots)]
            started = [0] * slots
            for i, env in enumerate(envs):
                env.reset(seed=7 * n + i)
                started[i] = 1
            ended_games = [0] * slots
            replays = []
            pick = np.random.default_rng(n)
            bad = np.where(masks[0] == 0)[0]
            if bad.size:
                before = (obs.copy(), masks.copy())
                actions = masks.argmax(axis=1)  # each game's first legal action, but game 0's
                actions[0] = bad[0]
                try:
                    batch.step(actions)
                    raise AssertionError("an illegal action was played")
                except ValueError as exc:
                    assert "game 0" in str(exc), exc
                assert np.array_equal(before[0], batch.observations) and np.array_equal(before[1], batch.action_masks)
            while min(ended_games) < games_each:
                for i, env in enumerate(envs):
                    agent = env.agent_selection
                    shown = env.observe(agent)
                    assert env.unwrapped.agent_name_mapping[agent] == seats[i], (game, n, i)
                    assert np.array_equal(shown["observation"], obs[i]), (game, n, i, "observation")
                    assert np.array_equal(shown["action_mask"], masks[i]), (game, n, i, "mask")
                actions = np.array([pick.choice(np.flatnonzero(m)) for m in masks])
                obs, masks, seats, rewards, ended = batch.step(actions)
                for i, env in enumerate(envs):
                    env.step(int(actions[i]))
                    raw = env.unwrapped
                    if not raw.state.is_terminal():
                        assert not ended[i] and not rewards[i].any()
                        continue
                    assert ended[i], (game, n, i)
                    expected = np.array([raw.rewards[a] for a in raw.possible_agents], dtype=np.float32)
                    assert np.array_equal(rewards[i], expected), (rewards[i], expected)
                    replays.append(raw.replay())
                    ended_games[i] += 1
                    env.reset(seed=7 * n + i + started[i] * slots)
                    started[i] += 1
            # (sorted by seed: the batch keeps them in the order games ended in, not slot by slot)
            by_seed = sorted(batch.replays, key=lambda doc: doc["seed"])
            assert by_seed == sorted(replays, key=lambda doc: doc["seed"]), f"{game} {n}: replays differ"
            for doc in batch.replays:
                assert strict_problems(doc) == [], strict_problems(doc)
                verify(doc)
            print(f"batched: {game} {n} players, {len(replays)} games equal to env()'s")


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
        engine_agrees(k, game, n, raw.replay(), [final[a] for a in raw.possible_agents])
        played += 1
    print(f"agreement: {played} games")


def engine_agrees(k: int, game: str, n: int, doc: dict, rewards: list[float]) -> None:
    """The engine alone, with chance drawn from random.Random(k) and the
    decisions the interface sent, ends as the replay ``doc`` says; the
    replay verifies and ``rewards`` are the ranks' rewards."""
    decisions = [e for e in doc["events"] if e["by"] != CHANCE]
    rng = random.Random(k)
    state = new_game(game, n).new_initial_state()
    for event in decisions:
        while state.is_chance_node():
            state.apply_chance(state.sample_chance(rng))
        state.apply(event["by"], event["action"])
    assert state.is_terminal(), f"game {k}: the engine's game did not end"
    result = state.result()
    assert {**result.as_dict(), "forfeits": []} == doc["result"], (k, result, doc["result"])
    assert strict_problems(doc) == [], (k, strict_problems(doc))
    assert verify(doc).result == result
    assert rewards == rank_rewards(result.ranks), (k, rewards, result.ranks)


def gymnasium_wrapper() -> None:
    """The registered ids pass check_env through gymnasium.make; an episode
    plays to its end with the reward of its rank, and its replay verifies
    and is replay v1 exactly."""
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    from cardroom_sdk.envs.gym import ENV_IDS

    for game in ENVS:
        for n, opponents in ((2, "greedy"), (3, "random"), (4, "greedy")):
            env = gymnasium.make(ENV_IDS[game], num_players=n, seat=n - 1, opponents=opponents)
            check_env(env.unwrapped, skip_render_check=True)
            obs, _ = env.reset(seed=5)
            pick = np.random.default_rng(5)
            done = False
            while not done:
                obs, reward, done, _truncated, info = env.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
                assert "illegal" not in info
            assert reward == rank_rewards(env.unwrapped.aec.state.result().ranks)[n - 1]
            replay = env.unwrapped.replay()
            assert (
                strict_problems(replay) == [] and verify(replay).result.ranks == env.unwrapped.aec.state.result().ranks
            )
            env.close()
            print(f"gymnasium check_env: {game} {n} players against {opponents}")


def gymnasium_vectors() -> None:
    """make_vec on both ids steps a batch of episodes; seeded episodes
    against the search bot repeat exactly (it searches by iterations)."""
    import gymnasium

    from cardroom_sdk.envs.gym import ENV_IDS

    for game, env_id in ENV_IDS.items():
        envs = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode="sync", opponents="greedy")
        obs, _ = envs.reset(seed=11)
        pick = np.random.default_rng(11)
        finished = 0
        for _ in range(400):
            # an episode that just ended shows an empty mask: its next action only resets it (Gymnasium's next-step autoreset)
            actions = [int(pick.choice(np.flatnonzero(mask))) if mask.any() else 0 for mask in obs["action_mask"]]
            obs, _rewards, terminated, truncated, _infos = envs.step(actions)
            finished += int(np.sum(terminated | truncated))
        envs.close()
        assert finished > 0, f"{game}: no episode of the vector ended in 400 steps"
        traces = []
        for _ in range(2):
            env = gymnasium.make(env_id, num_players=2, opponents="ismcts:iterations=20")
            obs, _ = env.reset(seed=3)
            trace, done = [], False
            while not done:
                action = int(np.flatnonzero(obs["action_mask"])[0])
                obs, reward, done, _t, _i = env.step(action)
                trace.append(action)
            traces.append((trace, env.unwrapped.replay()["events"]))
            env.close()
        assert traces[0] == traces[1], f"{game}: a seeded episode against ismcts did not repeat"
        print(f"gymnasium make_vec: {game}, {finished} episodes ended; ismcts episodes repeat")


def _random_opponent(_obs, legal, rng):
    """A random legal action; an Allegory distribute's chips named in the
    reverse of the Pool's order (the environment records them in its own)."""
    action = rng.choice(legal)
    if action["type"] == "distribute":
        names = rng.choices(action["cards"], k=action["total"])
        action = {"type": "distribute", "chips": {name: names.count(name) for name in reversed(dict.fromkeys(names))}}
    return action


def gymnasium_opponents(games: int = 30) -> None:
    """The differential test of ``SingleSeatEnv``'s opponents played at once
    (``step_protocol``) and its learner's action played without the AEC
    ``step``'s bookkeeping: the same seeds and learner actions as every
    action stepped index by index through the AEC ``step`` (the way they
    were played before; each index made a protocol action by
    ``decision_step`` and the views made afresh, where ``SingleSeatEnv``
    places a distribute's next chip at once and rewrites its array in
    place) give the same observations, masks, rewards and replays; an
    opponent's illegal action raises the same ValueError."""
    from cardroom_sdk.envs.gym import SingleSeatEnv

    def by_index(env):
        aec = env.aec

        def step_protocol(seat, obs, move):
            for index in aec.codec.protocol_to_actions(obs, move):
                aec.step(index)

        def act(action):  # the learner's action through the AEC step, as SingleSeatEnv played it before
            if not aec.action_mask(env.seat)[action]:
                return -1.0, True, {"illegal": True}
            aec.step(action)
            env._play_others()
            if not aec.state.is_terminal():
                return 0.0, False, {}
            return float(aec.final_rewards()[env.seat]), True, env._outcome_info()

        def decide(seat, index, _view):  # decision_step at every index, the seat's views then made afresh
            obs = aec.state.observation(seat)
            move, aec.pending = decision_step(aec.codec, aec.state, seat, obs, index, aec.pending)
            aec._changed()
            return move

        aec.step_protocol = step_protocol
        aec._decide = decide
        env._act = act
        return env

    steps = 0
    for k in range(games):
        game = ("allegory", "allegra")[k % 2]
        n = COUNTS[k % len(COUNTS)]
        envs = [SingleSeatEnv(game, num_players=n, seat=k % n, opponents=_random_opponent) for _ in range(2)]
        by_index(envs[1])
        (obs, _), (other, _) = [env.reset(seed=k) for env in envs]
        pick = np.random.default_rng(k)
        done = False
        while not done:
            assert np.array_equal(obs["observation"], other["observation"]), (game, n, k)
            assert np.array_equal(obs["action_mask"], other["action_mask"]), (game, n, k)
            action = int(pick.choice(np.flatnonzero(obs["action_mask"])))
            (obs, *rest), (other, *rest_other) = [env.step(action) for env in envs]
            assert rest == rest_other, (game, n, k, rest, rest_other)
            done = rest[1]
            steps += 1
        assert envs[0].replay() == envs[1].replay(), (game, n, k, "replays differ")
        assert strict_problems(envs[0].replay()) == []
        verify(envs[0].replay())
    bad_moves = {"allegory": ({"type": "bid", "amount": 90}, {"type": "take", "card": "nothing"}),
                 "allegra": ({"type": "give", "to": 1}, {"type": "knock"}, {"type": "nothing"})}  # fmt: skip
    for game, moves in bad_moves.items():
        for move in moves:
            errors = []
            policy = lambda *_, move=move: move  # noqa: E731
            for env in (SingleSeatEnv(game, opponents=policy), by_index(SingleSeatEnv(game, opponents=policy))):
                try:
                    env.reset(seed=1)
                    for _ in range(20):  # the opponent's turn comes
                        obs, _r, done, _t, _i = env.step(int(np.flatnonzero(env.action_masks())[0]))
                    errors.append(None)
                except Exception as exc:  # noqa: BLE001 (compared below)
                    errors.append((type(exc), str(exc)))
            assert errors[0] == errors[1] and errors[0] is not None, (game, move, errors)
    print(f"gymnasium opponents at once: {games} episodes, {steps} learner steps equal to index by index")


def _same(a, b) -> bool:
    """Equal values, numpy arrays (dtype included) within dicts too."""
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return a == b


def gymnasium_vector_equal(steps: int = 300) -> None:
    """``make_vec`` on the registered ids gives ``SingleSeatVectorEnv``,
    which plays as ``make_vec(..., vectorization_mode="sync")`` does: the
    same seeds and actions give the same observations, masks, rewards,
    terminations, infos (at every step, across next-step autoresets and an
    illegal action) and replays; ``check_env`` of Gymnasium passes its
    episodes' environments."""
    import gymnasium

    from cardroom_sdk.envs.gym import ENV_IDS, SingleSeatVectorEnv

    for game, env_id in ENV_IDS.items():
        for n in (2, 3, 4, 6):
            kwargs = {"num_players": n, "seat": 1, "opponents": _random_opponent}
            fast = gymnasium.make_vec(env_id, num_envs=5, **kwargs)
            assert isinstance(fast.unwrapped, SingleSeatVectorEnv), type(fast.unwrapped)
            sync = gymnasium.make_vec(env_id, num_envs=5, vectorization_mode="sync", **kwargs)
            shown = [fast.reset(seed=n), sync.reset(seed=n)]
            assert _same(*shown), (game, n, "reset")
            pick = np.random.default_rng(n)
            ended = 0
            for k in range(steps):
                masks = shown[0][0]["action_mask"]
                actions = [int(pick.choice(np.flatnonzero(m))) if m.any() else 0 for m in masks]
                if k == 7:
                    actions[2] = int(np.flatnonzero(masks[2] == 0)[0])  # illegal: the episode ends, reward -1
                shown = [fast.step(actions), sync.step(actions)]
                for part, a, b in zip(("observations", "rewards", "terminations", "truncations", "infos"), *shown):
                    assert _same(a, b), (game, n, k, part, a, b)
                ended += int(shown[0][2].sum())
            for mine, theirs in zip(fast.unwrapped.envs, sync.unwrapped.envs):
                assert mine.replay() == theirs.unwrapped.replay(), (game, n, "replays differ")
            assert ended > 5, (game, n, ended)
            fast.close()
            sync.close()
            print(f"gymnasium make_vec: {game} {n} players, {steps} steps of 5 episodes equal to SyncVectorEnv's")


def gymnasium_action_masks(games: int = 100) -> None:
    """action_masks() agrees with the engine's legal actions at every step
    of 100 games: exactly the indices of the legal actions (for an Allegory
    distribute, placed chip by chip, the Pool cards it may take a chip)."""
    import gymnasium

    from cardroom_sdk.envs.gym import ENV_IDS

    steps = 0
    for k in range(games):
        game = ("allegory", "allegra")[k % 2]
        n = (2, 3, 4)[k % 3]
        _module, codec = ENVS[game]
        env = gymnasium.make(ENV_IDS[game], num_players=n, seat=k % n, opponents="random")
        obs, _ = env.reset(seed=k)
        pick = np.random.default_rng(k)
        done = False
        while not done:
            raw = env.unwrapped
            mask = raw.action_masks()
            assert mask.dtype == bool and mask.shape == (codec.NUM_ACTIONS,)
            seat_obs = raw.aec.state.observation(raw.seat)
            legal = raw.aec.state.legal_actions(raw.seat)
            if legal[0]["type"] != "distribute":
                assert set(np.flatnonzero(mask)) == {codec.protocol_to_action(seat_obs, a) for a in legal}, (game, k)
            else:  # a chip at a time, onto the Pool's cards
                assert 0 < mask.sum() <= len(legal[0]["cards"]), (game, k, mask.sum())
            assert np.array_equal(mask, obs["action_mask"].astype(bool))
            obs, _reward, done, _t, _i = env.step(int(pick.choice(np.flatnonzero(mask))))
            steps += 1
        env.close()
    print(f"gymnasium action_masks: {games} games, {steps} steps agree")


def _openspiel_game(game: str, n: int, **options):
    import pyspiel

    import cardroom_sdk.envs.openspiel  # noqa: F401 (registers the games)

    return pyspiel.load_game(f"python_{game}", {"players": n, **options})


def openspiel_games() -> None:
    """pyspiel's own random simulation test (clones, serialization, legal
    action masks, chance outcomes, observations and information states of
    every seat at every node, returns in bounds) for both games at 2, 3, 4
    and 6 players; the game parameters reach the engine; a bad one is refused
    with the engine's message."""
    import pyspiel

    for game in ENVS:
        for n in COUNTS:
            os_game = _openspiel_game(game, n)
            assert os_game.num_players() == n and os_game.get_type().short_name == f"python_{game}"
            pyspiel.random_sim_test(os_game, num_sims=1, serialize=True, verbose=False)
            state = os_game.new_initial_state()
            while state.is_chance_node():  # the first engine event, dealt card by card
                outcomes = state.chance_outcomes()
                assert abs(sum(p for _a, p in outcomes) - 1) < 1e-9
                state.apply_action(outcomes[-1][0])
            copy = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(os_game, state))[1]
            assert str(copy) == str(state) and copy.information_state_string() == state.information_state_string()
            assert state.engine_state.observation(None) == copy.engine_state.observation(None)
            print(f"openspiel random_sim_test: {game} {n} players")
    unique = _openspiel_game("allegory", 3, unique_morals=True)
    assert unique.new_initial_state().engine_state.game.options == {"unique_morals": True}
    for bad, message in (
        ({"players": 7}, "2 to 6 players"),
        ({"players": 2, "colour": True}, "Unknown parameter 'colour'"),
    ):
        try:
            pyspiel.load_game("python_allegra", bad)
        except Exception as exc:  # noqa: BLE001 (pyspiel wraps the engine's error)
            assert message in str(exc), exc
        else:
            raise AssertionError(f"{bad} was accepted")
    from open_spiel.python.observation import make_observation

    for kind, message in (
        ((True, False, pyspiel.PrivateInfoType.ALL_PLAYERS), "every seat's private"),
        ((False, False, pyspiel.PrivateInfoType.NONE), "public or private"),
        ((True, True, pyspiel.PrivateInfoType.NONE), "whole information"),
    ):
        public, recall, private = kind
        try:
            make_observation(unique, pyspiel.IIGObservationType(public, recall, private))
        except ValueError as exc:
            assert message in str(exc), exc
        else:
            raise AssertionError(f"an observer of {kind} was made")
    print("openspiel parameters: checked")


def _tensor_key(tensor: np.ndarray) -> bytes:
    """A tensor's digest (its non-zero entries and where they are: the
    tensors are long and mostly zeros)."""
    import hashlib

    at = np.flatnonzero(tensor)
    return hashlib.sha256(len(tensor).to_bytes(8, "big") + at.tobytes() + tensor[at].tobytes()).digest()


class _RecallCheck:
    """Plays one game (and count) for ``openspiel_perfect_recall``: keeps
    each seat's action-observation history as a chained digest, independent
    of the games' own record, and the maps between histories, tensors and
    strings it has met."""

    def __init__(self, game: str, n: int, branch_len: int):
        import pyspiel

        self.name, self.n, self.branch_len = f"{game} {n}", n, branch_len
        self.game = _openspiel_game(game, n)
        self.observer = _openspiel_observers(self.game)["information state"]
        self.rng = np.random.default_rng(2600 + n)
        self.maps: tuple[dict, ...] = (
            {},
            {},
            {},
            {},
        )  # history->tensor, tensor->history, tensor->string, string->tensor
        self.tables: dict[bytes, str] = {}  # history -> the whole table, to count the hidden differences
        self.hidden = self.checked = 0
        self.chance = pyspiel.PlayerId.CHANCE

    def visit(self, state, keys: list[bytes]) -> None:
        tensor_of, history_of, string_of, tensor_of_string = self.maps
        table = json.dumps(state.engine_state.observation(None), sort_keys=True)
        for seat in range(self.n):
            self.observer.set_from(state, seat)
            tensor = _tensor_key(self.observer.tensor)
            string = self.observer.string_from(state, seat)
            key = keys[seat]
            assert tensor_of.setdefault(key, tensor) == tensor, f"{self.name}: one history, two tensors"
            assert history_of.setdefault(tensor, key) == key, f"{self.name}: two histories, one tensor"
            assert string_of.setdefault(tensor, string) == string, f"{self.name}: one tensor, two strings"
            assert tensor_of_string.setdefault(string, tensor) == tensor, f"{self.name}: two tensors, one string"
            self.hidden += self.tables.setdefault(key, table) != table
            self.checked += 1

    def act(self, state, keys: list[bytes], action: int) -> list[bytes]:
        import hashlib

        player = state.current_player()
        if player != self.chance:  # a seat remembers its own action
            keys = list(keys)
            keys[player] = hashlib.sha256(keys[player] + f"|{action}".encode()).digest()
        state.apply_action(action)
        return keys

    def play(self, state, keys: list[bytes], nodes: int | None = None) -> None:
        """Random play from ``state`` (``nodes`` decisions, or to the end
        with branches off the way: two other actions or chance outcomes at
        some nodes, each played on for ``branch_len`` decisions)."""
        import hashlib

        rng = self.rng
        while nodes is None or nodes > 0:
            chance = state.is_chance_node()
            if not chance:  # an engine chance event is seen whole, not card by card
                keys = [hashlib.sha256(k + state.observation_string(s).encode()).digest() for s, k in enumerate(keys)]
                self.visit(state, keys)
            if state.is_terminal():
                return
            legal = [a for a, _p in state.chance_outcomes()] if chance else state.legal_actions()
            # the last cards of a deal (few outcomes left) lie deepest: the seats see them last, if ever
            odds = (0.5 if len(legal) <= 4 else 0.05) if chance else 0.04
            if nodes is None and len(legal) > 1 and rng.random() < odds:
                for other in rng.choice(legal, size=2, replace=False):
                    copy = state.clone()
                    self.play(copy, self.act(copy, keys, int(other)), self.branch_len)
            if nodes is not None and not chance:
                nodes -= 1
            keys = self.act(state, keys, int(rng.choice(legal)))


def openspiel_perfect_recall(bases: int = 1, branch_len: int = 25, counts=(2, 3, 4)) -> None:
    """The information state (tensor and string) is perfect recall: over
    random games and branches off them (another chance outcome or another
    action at a node, then random play), every seat's action-observation
    history (its observation string at every decision node and its own
    actions) and its information state determine each other: the same
    history always gives the same tensor and string, two histories never
    share a tensor or a string. Branches at chance nodes give the same
    history over different hidden cards (a card the seat has not seen, a
    Moral of another seat): the tensor must not tell them apart, so no
    hidden card reaches any element."""
    for game in ENVS:
        for n in counts:
            check = _RecallCheck(game, n, branch_len)
            for _ in range(bases):
                check.play(check.game.new_initial_state(), [b""] * n)
            assert check.hidden > 0, f"{game} {n}: no two tables with the same history were compared"
            print(
                f"perfect recall, openspiel: {game} {n} players ({check.checked} seat views, "
                f"{len(check.maps[0])} histories, {check.hidden} with other hidden cards)"
            )


def openspiel_resample() -> None:
    """At decision nodes of random games, every seat's resampled state is
    exactly ``sample_world`` of its observation and earlier observations
    (same random numbers), has the same information state (string and
    tensor) and the same player to act; the hidden cards do vary."""
    import pyspiel

    for game in ENVS:
        for n in COUNTS:
            os_game = _openspiel_game(game, n)
            state = os_game.new_initial_state()
            rng = np.random.default_rng(n)
            seen: list[list[dict]] = [[] for _ in range(n)]
            last_events = -1
            checked = differed = 0
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probs = zip(*state.chance_outcomes())
                    state.apply_action(int(rng.choice(actions, p=probs)))
                    continue
                player = state.current_player()
                events = len(state.replay()["events"])
                if events != last_events:  # a new decision: the seat receives its observation
                    seen[player].append(state.engine_state.observation(player))
                    last_events = events
                if rng.random() < 0.1:
                    for seat in range(n):
                        seed = int(rng.integers(1 << 30))
                        world = state.resample_from_infostate(seat, pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0))
                        draw = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)()
                        obs = state.engine_state.observation(seat)
                        history = [o for o in seen[seat] if o is not seen[seat][-1] or o != obs]
                        assert state.seat_history(seat) == seen[seat]
                        expected = sample_world(obs, random.Random(int(draw * 2**52)), history)
                        assert world.engine_state.observation(None) == expected.observation(None)
                        assert world.information_state_string(seat) == state.information_state_string(seat)
                        assert world.information_state_tensor(seat) == state.information_state_tensor(seat)
                        assert world.current_player() == state.current_player()
                        differed += world.engine_state.observation(None) != state.engine_state.observation(None)
                        if checked % 10 == 0:  # a world serializes too (it has no past to re-play)
                            text = pyspiel.serialize_game_and_state(os_game, world)
                            copy = pyspiel.deserialize_game_and_state(text)[1]
                            assert str(copy) == str(world)
                            assert copy.information_state_string(seat) == world.information_state_string(seat)
                        checked += 1
                state.apply_action(int(rng.choice(state.legal_actions())))
            assert checked > 10 and differed > checked // 2, (game, n, checked, differed)
            print(f"openspiel resample_from_infostate: {game} {n} players, {checked} resamples")


def openspiel_bots() -> None:
    """OpenSpiel's ISMCTS bot (random rollouts) plays whole games of both
    games, and ``evaluate_bots`` plays its uniform random bots."""
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    for game, n, simulations in (("allegory", 2, 10), ("allegra", 2, 3), ("allegory", 3, 4)):
        os_game = _openspiel_game(game, n)
        rs = np.random.RandomState(n)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
        bot = ismcts.ISMCTSBot(os_game, evaluator, uct_c=2.0, max_simulations=simulations, random_state=rs)
        state = os_game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(rs.choice(actions, p=probs))
            elif state.current_player() == 0:
                state.apply_action(bot.step(state))
                decisions += 1
            else:
                state.apply_action(rs.choice(state.legal_actions()))
        assert decisions > 10 and verify(state.replay()).result.ranks == state.engine_state.result().ranks
        print(f"openspiel ismcts: {game} {n} players, {decisions} decisions, returns {state.returns()}")
        bots = [pyspiel.make_uniform_random_bot(seat, seat) for seat in range(n)]
        state = os_game.new_initial_state()
        returns = evaluate_bots(state, bots, rs)  # plays on ``state``
        assert state.is_terminal() and returns == rank_rewards(verify(state.replay()).result.ranks), returns
        print(f"openspiel evaluate_bots: {game} {n} players, returns {returns}")
    openspiel_rl_environment()


def openspiel_rl_environment() -> None:
    """OpenSpiel's rl_environment, what its NFSP and DQN agents train on,
    plays both games and serves the information-state tensor as
    ``info_state``, the game's declared size at every step."""
    from open_spiel.python import rl_environment

    for game in ENVS:
        os_game = _openspiel_game(game, 2)
        env = rl_environment.Environment(os_game)
        env.seed(3)  # its chance sampler (a seed= argument goes to the game's parameters)
        size = os_game.information_state_tensor_size()
        assert env.observation_spec()["info_state"] == (size,)
        rng = np.random.default_rng(3)
        step = env.reset()
        steps = 0
        while not step.last():
            player = step.observations["current_player"]
            assert all(len(step.observations["info_state"][p]) == size for p in range(2))
            step = env.step([int(rng.choice(step.observations["legal_actions"][player]))])
            steps += 1
        state = env.get_state
        assert step.rewards == rank_rewards(verify(state.replay()).result.ranks), step.rewards
        print(f"openspiel rl_environment: {game}, {steps} steps, info_state of {size}")


def openspiel_agreement(games: int = 1000, replays: str | None = None) -> None:
    """Random games driven through OpenSpiel (each engine chance event drawn
    from random.Random(seed) and dealt as its chance outcomes, decisions
    uniform over the legal actions) end as the engine ends them on the same
    seeds, and their replays verify; ``replays`` keeps a few for `cardroom verify`."""
    import json
    from pathlib import Path

    played = 0
    for k in range(games):
        game = ("allegory", "allegra")[k % 2]
        n = COUNTS[(k // 2) % len(COUNTS)]
        state = _openspiel_game(game, n).new_initial_state()
        rng = random.Random(k)
        pick = np.random.default_rng(k)
        while not state.is_terminal():
            if state.is_chance_node():
                for outcome in state.chance_actions(state.engine_state.sample_chance(rng)):
                    assert outcome in dict(state.chance_outcomes()), (k, outcome)
                    state.apply_action(outcome)
                continue
            state.apply_action(int(pick.choice(state.legal_actions())))
        doc = state.replay(seed=k)
        assert strict_problems(doc) == [], (k, strict_problems(doc))
        engine_agrees(k, game, n, doc, state.returns())
        if replays and k < 8:
            Path(replays, f"openspiel-{k}.json").write_text(json.dumps(doc))
        played += 1
    print(f"openspiel agreement: {played} games")


SECTIONS = {
    f.__name__: f
    for f in (
        pettingzoo_api, no_hidden_cards, action_mapping, wrapper_paths, fast_codecs, batched_envs, agreement, gymnasium_wrapper,
        gymnasium_vectors,
        gymnasium_action_masks, gymnasium_opponents, gymnasium_vector_equal,
        openspiel_games, openspiel_resample, openspiel_bots, openspiel_agreement, openspiel_perfect_recall,
    )
}  # fmt: skip

if __name__ == "__main__":
    names = [a for a in sys.argv[1:] if not a.startswith("--replays=")]
    kept = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--replays=")]
    for name in names or SECTIONS:
        if name == "openspiel_agreement" and kept:
            openspiel_agreement(replays=kept[0])
        else:
            SECTIONS[name]()
    print("all passed")
