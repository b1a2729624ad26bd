"""Checks of what training relies on, run by tests/sdk/test_train.py inside
the venv holding the wheel with its ``research`` extra. ``python
research_training.py SECTION...``; exits non-zero at the first failure."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from cardroom.env_opponents import BotProgram
from cardroom_sdk.envs import allegory_codec, allegory_v1, allegra_codec, allegra_v1
from cardroom_sdk.envs.gym import SingleSeatEnv

CHECKOUT = Path(__file__).resolve().parents[2]

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
        searching = SingleSeatEnv(game, num_players=2, seat=1, opponents="ismcts:iterations=5")
        searching.reset(seed=1)
        before = searching.policies[0]
        searching.reset(seed=2)
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


def _bot_processes() -> list[int]:
    """Live processes of the sandbox's bot uids (the programs run as those)."""
    from cardroom.sandbox import uid_range

    bot_uids = {str(uid) for uid in uid_range()}
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if bot_uids & set(fields.get("Uid", "").split()) and not fields.get("State", "").strip().startswith(("Z", "X")):
            found.append(int(status.parent.name))
    return found


def _parent(pid: int) -> int:
    """``pid``'s parent (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))


def _started_here(pids: set[int]) -> set[int]:
    """Those of ``pids`` that descend from this process (the bot processes of
    other tests running beside are not). The tests' own helper for this
    (tests/ladder/test_casual_worker.py) is not importable here: this script
    runs against the installed wheel, not the checkout."""
    me, out = os.getpid(), set()
    for pid in pids:
        at = _parent(pid)
        while at > 1 and at != me:
            at = _parent(at)
        if at == me:
            out.add(pid)
    return out


def program_opponents() -> None:
    """Bot programs as opponents, run through the runner: the node starter
    and a Python sample play whole episodes; a program that answers an
    illegal move is played by the default policy from then on and named in
    the last step's info; nothing of theirs is left once an episode ends."""

    def episode(env, seed):
        """Plays one episode; returns its replay and the last info. Its bot
        processes are those that started with it under this process (other
        tests' bots may run beside)."""
        before = set(_bot_processes())
        obs, _ = env.reset(seed=seed)
        ours = _started_here(set(_bot_processes()) - before)
        assert ours, "the program does not run in the sandbox"
        done, info = False, {}
        while not done:
            obs, _reward, done, _truncated, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert not ours & set(_bot_processes()), "a program outlived its episode"
        return env.aec.replay(), info

    folders = set(Path(tempfile.gettempdir()).glob("cardroom-env-*"))
    for game, program in [("allegra", "bots/starters/node"), ("allegory", "bots/samples/allegory_miser.py")]:
        before = set(_bot_processes())
        env = SingleSeatEnv(game, num_players=2, seat=0, opponents=BotProgram(CHECKOUT / program))
        assert not _started_here(set(_bot_processes()) - before), "a program started before reset"
        for seed in (1, 2):
            replay, info = episode(env, seed)
            moves = [e for e in replay["events"] if e["by"] == 1]
            assert moves and info == {"opponent_forfeits": {}}, info
        env.close()
        print(f"program opponent: {game}")
    env = SingleSeatEnv("allegra", 2, 0, BotProgram(CHECKOUT / "tests/sandbox/hostile/illegal.py"))
    replay, info = episode(env, 3)
    assert list(info["opponent_forfeits"]) == [1] and info["opponent_forfeits"][1].startswith("illegal_action: ")
    try:
        SingleSeatEnv("allegra", 2, 0, BotProgram(CHECKOUT / "no-such-bot.py"))
        raise AssertionError("a missing program was accepted")
    except ValueError as exc:
        assert "no such file or folder" in str(exc)
    assert set(Path(tempfile.gettempdir()).glob("cardroom-env-*")) == folders, "a program's folder was left"
    print("program opponent: forfeit")


SECTIONS = {f.__name__: f for f in (fresh_opponents, policy_action, program_opponents)}

if __name__ == "__main__":
    for name in sys.argv[1:] or SECTIONS:
        SECTIONS[name]()
    print("all passed")
