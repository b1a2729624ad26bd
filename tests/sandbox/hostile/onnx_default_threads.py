"""An ONNX bot as an author who sets no option writes it: a session of
tiny.onnx (beside it) with ONNX Runtime's default options, run at start and
at every move. It must load and run under the sandbox's seccomp filter and
its /proc and /sys views, and play a whole match; it logs the threads its
process has (ONNX Runtime sizes its pool from the cores it sees)."""

import json
import os
import sys

import numpy as np
import onnxruntime as ort

session = ort.InferenceSession("tiny.onnx", providers=["CPUExecutionProvider"])
x = np.ones((1, 4), dtype=np.float32)


def threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError as exc:
        return f"unknown ({exc.strerror})"


first = session.run(None, {"x": x})[0]
sys.stderr.write(f"onnxruntime {ort.__version__} {ort.get_available_providers()}\n")
sys.stderr.write(
    f"onnx ran: {[round(v, 3) for v in first[0].tolist()]}, threads {threads()}, cpus {os.sched_getaffinity(0)}\n"
)
sys.stderr.flush()


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        session.run(None, {"x": x})
        legal = message["legal"]
        reply({"type": "action", "action": legal[0]})
    else:
        break
sys.stderr.write(f"onnx bot done, threads {threads()}\n")
