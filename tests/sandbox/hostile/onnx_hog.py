"""Hostile ONNX bot: plays two moves, then runs hog.onnx (beside it), whose
output asks ONNX Runtime for 4 GiB. The sandbox's memory limits must stop
the allocation: the bot logs ONNX Runtime's error and dies of it (expected
forfeit: crash)."""

import json
import sys

import numpy as np
import onnxruntime as ort


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def hog():
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession("hog.onnx", options, providers=["CPUExecutionProvider"])
    sys.stderr.write("onnx hog loaded\n")
    try:
        out = session.run(None, {"x": np.ones(1, dtype=np.float32)})[0]
    except Exception as exc:
        sys.stderr.write(f"onnx hog stopped: {type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        raise
    sys.stderr.write(f"HOGGED {out.nbytes >> 20} MiB\n")  # never reached in the sandbox


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 3:
            hog()
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
