#!/usr/bin/env python3
"""A cardroom starter bot for the `python` runtime that plays a neural
network with ONNX Runtime: `allegory.onnx` and `allegra.onnx` beside this
file, one per game, each a policy from the environment's observation array
to one logit per action of its fixed action space (docs/train.md trains
them with PyTorch and exports them).

For each decision the bot encodes the observation with the very functions
the Gymnasium environment used in training (``cardroom_sdk.envs``' codecs),
masks out the illegal actions and plays the most probable legal one, so it
is deterministic. An Allegory ``distribute`` is asked one chip at a time, as
in the environment. ``cardroom_sdk.run`` speaks the protocol.

A model's contract: one input, float32 ``[batch, observation size]``; the
first output, float32 ``[batch, number of actions]`` (logits, or anything
whose largest legal entry is the move to play). Replace a file with your
own export and the bot plays it.

Try it locally:   cardroom play allegra bots/starters/python-onnx builtin:random
"""

import os
import sys

import numpy as np
import onnxruntime as ort

import cardroom_sdk
from cardroom_sdk.envs import allegory_codec, allegra_codec

HERE = os.path.dirname(os.path.abspath(__file__))
CODECS = {"allegory": allegory_codec, "allegra": allegra_codec}


class OnnxPolicy:
    """One game's model in an ONNX Runtime session that uses one thread:
    the bot has one core, and a thread pool sized for the host's cores would
    only make its threads wait for each other."""

    def __init__(self, path, codec):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # no busy-waiting thread between calls: the bot's CPU time is counted
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self.input = self.session.get_inputs()[0].name
        size = self.session.get_inputs()[0].shape[-1]
        if size != codec.OBS_SIZE:
            raise ValueError(
                f"{os.path.basename(path)} takes {size} inputs; this game's observation has {codec.OBS_SIZE}"
            )

    def best(self, observation, mask):
        logits = self.session.run(None, {self.input: observation.reshape(1, -1).astype(np.float32)})[0][0]
        return int(np.argmax(np.where(mask, logits, -np.inf)))


def load(game):
    path = os.path.join(HERE, f"{game}.onnx")
    try:
        return OnnxPolicy(path, CODECS[game])
    except Exception as exc:  # a missing or malformed model: say which, plainly
        sys.stderr.write(f"onnx-starter: cannot load {game}.onnx: {exc}\n")
        raise SystemExit(1) from None


POLICIES = {game: load(game) for game in CODECS if os.path.exists(os.path.join(HERE, f"{game}.onnx"))}


def choose(observation, legal):
    game = observation["game"]
    policy = POLICIES.get(game) or load(game)
    return CODECS[game].policy_action(observation, legal, policy.best)


if __name__ == "__main__":
    cardroom_sdk.run(choose)
