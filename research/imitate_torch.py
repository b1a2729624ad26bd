#!/usr/bin/env python3
"""Train an Allegra policy with PyTorch by imitating a search bot
(``builtin:ismcts`` at a fixed number of iterations), export it to ONNX, and
write a bot package that plays it with ONNX Runtime (the starter kit
bots/starters/python-onnx).

    python research/imitate_torch.py allegra --out my-onnx-bot
    cardroom tournament allegra my-onnx-bot builtin:greedy --format duplicate --deals 30

Behaviour cloning with DAgger (Ross, Gordon & Bagnell 2011): round 0 lets
the teacher play ``--games`` two-player games against each of
``--opponents`` (seats 0 and 1 in turn) and records, at every decision of its
seat with more than one legal action, the observation array, the legal
actions and the teacher's choice. Each later round the *student* (the network
trained so far) plays the same number of games while the teacher, fed the
same observations, labels every position the student reaches; the student is
trained again on all the rounds' labels. The network is a masked-logits MLP
(two ReLU layers of ``--hidden`` units) from the environment's observation
array (``allegra_codec.encode``) to one logit per action of the environment's
action space, trained with cross-entropy on the teacher's action among the
legal ones. The export is those logits, exactly what the starter's ``bot.py``
takes (decision 221); decision 266 says why this recipe and what it gives.

Reproducible: the teacher searches a fixed number of iterations, every game
is seeded, torch runs one thread, so the same options give the same model.
Each round's labelled positions are cached in ``--cache`` (default
``var/imitation`` below the current folder), keyed by everything that made
them; a second run with the same options only trains. Allegra only: in Allegory the search bot at
a small budget is no stronger than ``builtin:greedy`` (docs/luck.md), so
there is no stronger teacher to copy at this cost.

Needs the training extra (``pip install torch==2.13.0
"cardroom[research,train]"``, a CPU build of torch) and the built-in bots
(``bots``, in the cardroom package).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bots import builtin_chooser, ismcts_bot  # noqa: E402
from cardroom_sdk.envs import allegra_codec  # noqa: E402
from engine import new_game  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_torch import write_package  # noqa: E402

CODECS = {"allegra": allegra_codec}
DEFAULT_CACHE = Path("var") / "imitation"  # below the folder it runs in


class MaskedLogits(torch.nn.Module):
    """Observation array in, one logit per action out (the mask is applied
    by whoever picks: the loss here, the bot on the ladder)."""

    def __init__(self, obs_size: int, num_actions: int, hidden: int):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(obs_size, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, num_actions),
        )

    def forward(self, observation):
        return self.net(observation)


def opponent_chooser(spec: str, game: str):
    """A fresh ``choose(observation, legal, rng)`` for one game: a built-in
    bot by name, or ``ismcts:N`` (N iterations a decision)."""
    name, _, iterations = spec.partition(":")
    if name == "ismcts":
        return ismcts_bot.make_choose(time_ms=None, iterations=int(iterations or 20))
    return builtin_chooser(name, game)


def play(game: str, net: MaskedLogits | None, teacher_iterations: int, opponent: str, seat: int, seed: int):
    """One two-player game with the learner in ``seat``: the teacher plays it
    (``net`` None) or the student does, the teacher labelling every position
    either way. Returns the learner's rank and the positions
    (observation arrays, masks, teacher's action indices)."""
    codec = CODECS[game]
    chance, teacher_rng, opponent_rng = (random.Random(f"{seed}:{part}") for part in ("chance", "teacher", "opponent"))
    teacher = ismcts_bot.make_choose(time_ms=None, iterations=teacher_iterations)
    other = opponent_chooser(opponent, game)
    state = new_game(game, 2).new_initial_state()
    observations, masks, labels = [], [], []
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_chance(state.sample_chance(chance))
            continue
        to_act = state.to_act()[0]
        observation, legal = state.observation(to_act), state.legal_actions(to_act)
        if to_act != seat:
            state.apply(to_act, other(observation, legal, opponent_rng))
            continue
        label = teacher(observation, legal, teacher_rng)  # always asked: it keeps the seat's history
        action = label
        if len(legal) > 1:
            array, mask = codec.encode(observation), codec.action_mask(observation, legal).astype(bool)
            observations.append(array.astype(np.float16))
            masks.append(mask)
            labels.append(codec.protocol_to_action(observation, label))
            if net is not None:
                action = codec.policy_action(observation, legal, lambda x, m: pick(net, x, m))
        state.apply(to_act, action)
    return state.result().ranks[seat], (observations, masks, labels)


def pick(net: MaskedLogits, observation: np.ndarray, mask: np.ndarray) -> int:
    """The most probable legal action, as the starter's bot.py picks."""
    with torch.no_grad():
        logits = net(torch.from_numpy(observation.astype(np.float32)).unsqueeze(0))[0].numpy()
    return int(np.argmax(np.where(mask, logits, -np.inf)))


def collect(args, net: MaskedLogits | None, round_no: int, seed_base: int) -> dict[str, np.ndarray]:
    """One round's labelled positions: ``--games`` games against each
    opponent, the learner's seat alternating."""
    observations, masks, labels, ranks = [], [], [], []
    started, cpu = time.monotonic(), time.process_time()
    for opponent in args.opponents:
        for g in range(args.games):
            rank, (o, m, y) = play(args.game, net, args.teacher_iterations, opponent, g % 2, seed_base + g)
            observations += o
            masks += m
            labels += y
            ranks.append(rank)
            if len(ranks) % 100 == 0:
                print(f"    {len(ranks)} games, {len(labels)} positions", flush=True)
    won = float(np.mean([r == 1 for r in ranks]))
    player = "teacher" if net is None else "student"
    print(f"  round {round_no}: the {player} won {won:.3f} of {len(ranks)} games against "
          f"{', '.join(args.opponents)}; {len(labels)} positions in {time.monotonic() - started:.0f} s", flush=True)  # fmt: skip
    return {
        "observations": np.stack(observations),
        "masks": np.stack(masks),
        "labels": np.asarray(labels, dtype=np.int64),
        "won": np.asarray([won]),
        "seconds": np.asarray([time.monotonic() - started, time.process_time() - cpu]),  # wall, CPU
    }


def cached_round(args, net: MaskedLogits | None, round_no: int, student_sha: str) -> tuple[dict[str, np.ndarray], str]:
    """A round's positions from the cache, or collected and cached, and their
    key: it covers the game, teacher, opponents, games, seed, round and the
    student's weights (round 0 has none)."""
    key = json.dumps([args.game, args.teacher_iterations, args.opponents, args.games, args.seed, round_no, student_sha])
    path = args.cache / f"{args.game}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz"
    if path.exists():
        with np.load(path) as data:
            print(f"  round {round_no}: {len(data['labels'])} positions from {path}", flush=True)
            return {name: data[name] for name in data.files}, path.stem
    seed_base = 1_000_000 * (args.seed + 1) + 10_000 * round_no
    data = collect(args, net, round_no, seed_base)
    args.cache.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **data)
    return data, path.stem


def weights_sha(net: MaskedLogits) -> str:
    digest = hashlib.sha256()
    for tensor in net.state_dict().values():
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()


def fit(net: MaskedLogits, rounds: list[dict[str, np.ndarray]], args, generator: torch.Generator) -> float:
    """Masked cross-entropy over every round's positions, continuing from the
    weights so far: each round the same number of gradient steps, ``--epochs``
    passes' worth of the first round's positions (so a round costs the same
    however many positions have piled up). Returns the agreement with the
    teacher over those steps' last pass's worth."""
    observations = torch.from_numpy(np.concatenate([r["observations"] for r in rounds]))
    masks = torch.from_numpy(np.concatenate([r["masks"] for r in rounds]))
    labels = torch.from_numpy(np.concatenate([r["labels"] for r in rounds]))
    per_pass = -(-len(rounds[0]["labels"]) // args.batch)  # batches in a pass over the first round
    steps = args.epochs * per_pass
    batches = []
    while len(batches) < steps:
        batches += torch.randperm(len(labels), generator=generator).split(args.batch)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    net.train()
    last_pass = steps - per_pass
    agree = seen = 0
    for step, batch in enumerate(batches[:steps]):
        logits = net(observations[batch].float()).masked_fill(~masks[batch], -1e9)
        loss = torch.nn.functional.cross_entropy(logits, labels[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step >= last_pass:
            agree += int((logits.argmax(1) == labels[batch]).sum())
            seen += len(batch)
    net.eval()
    return agree / seen


def cached_fit(net: MaskedLogits, rounds: list[dict[str, np.ndarray]], args, generator, data_keys: list[str]) -> float:
    """``fit``, or its weights from the cache when the same positions were
    trained on with the same options before (training is deterministic)."""
    key = json.dumps([data_keys, args.hidden, args.epochs, args.lr, args.weight_decay, args.batch, args.seed])
    path = args.cache / f"{args.game}-weights-{hashlib.sha256(key.encode()).hexdigest()[:16]}.pt"
    if path.exists():
        saved = torch.load(path)
        net.load_state_dict(saved["weights"])
        generator.set_state(saved["generator"])
        return saved["agreement"]
    agreement = fit(net, rounds, args, generator)
    args.cache.mkdir(parents=True, exist_ok=True)
    torch.save({"weights": net.state_dict(), "generator": generator.get_state(), "agreement": agreement}, path)
    return agreement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", choices=sorted(CODECS))
    parser.add_argument("--out", type=Path, required=True, help="the bot package to write (or add this model to)")
    parser.add_argument("--teacher-iterations", type=int, default=20, help="the teacher's search budget (default 20)")
    parser.add_argument("--opponents", default="greedy", help="bots the games are played against (default greedy)")
    parser.add_argument("--games", type=int, default=300, help="games a round against each opponent (default 300)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds: the teacher's, then DAgger's (default 4)")
    parser.add_argument("--epochs", type=int, default=6, help="gradient steps after each round, in passes over round 0")
    parser.add_argument("--hidden", type=int, default=256, help="units in each of the two hidden layers")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--weight-decay", type=float, default=1e-5)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where labelled positions are kept")
    args = parser.parse_args(argv)
    args.opponents = [o for o in args.opponents.split(",") if o]

    torch.set_num_threads(1)  # one core, as the bot has on the ladder
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    codec = CODECS[args.game]
    net = MaskedLogits(codec.OBS_SIZE, codec.NUM_ACTIONS, args.hidden).eval()
    print(f"imitating ismcts:{args.teacher_iterations} in {args.game} against {', '.join(args.opponents)}: "
          f"{args.rounds} rounds of {args.games} games each", flush=True)  # fmt: skip
    start, cpu = time.monotonic(), time.process_time()
    rounds, data_keys, history = [], [], []
    for round_no in range(args.rounds):
        student = None if round_no == 0 else net
        data, key = cached_round(args, student, round_no, "" if student is None else weights_sha(net))
        rounds.append(data)
        data_keys.append(key)
        agreement = cached_fit(net, rounds, args, generator, data_keys)
        positions = sum(len(r["labels"]) for r in rounds)
        won = float(rounds[-1]["won"][0])  # by the teacher in round 0, by the student after
        history.append({"round": round_no, "won": won, "positions": positions, "agreement": round(agreement, 4)})
        if "seconds" in data:  # the games' time, whichever run played them (not kept by older caches)
            history[-1]["games_seconds"], history[-1]["games_cpu_seconds"] = (
                round(float(t), 1) for t in data["seconds"]
            )
        print(f"  trained on {positions} positions: agrees with the teacher on {agreement:.3f}", flush=True)
    seconds, cpu_seconds = time.monotonic() - start, time.process_time() - cpu

    record = {
        "algorithm": "behaviour cloning with DAgger (PyTorch)",
        "teacher": f"builtin:ismcts, {args.teacher_iterations} iterations",
        "opponents": args.opponents, "games_per_round": args.games, "rounds": history, "epochs": args.epochs,
        "seed": args.seed, "hidden": [args.hidden, args.hidden], "lr": args.lr,
        "seconds": round(seconds, 1), "cpu_seconds": round(cpu_seconds, 1),
    }  # fmt: skip
    model_path = write_package(args.out, args.game, net, record)
    print(f"{args.game}: {history[-1]['positions']} positions in {seconds:.0f} s ({cpu_seconds:.0f} s CPU); "
          f"model {model_path} ({model_path.stat().st_size} bytes)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
