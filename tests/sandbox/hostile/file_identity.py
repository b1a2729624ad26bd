"""A bot that says which file it reads at each of a few paths: its
interpreter, a module of the standard library, the SDK, its own main.py
(the same package in every seat), the files bound over /proc's cpuinfo and
meminfo, as "file PATH DEVICE INODE" on stderr at
start; then random legal moves. Two seats of one match that print the same
device and inode for a path read the same pages of memory (decision 268)."""

import os
import sys

import cardroom_sdk

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from visible import log, play  # noqa: E402

PATHS = (
    sys.executable,
    os.__file__,
    cardroom_sdk.__file__,
    os.path.join(HERE, "main.py"),
    "/proc/cpuinfo",
    "/proc/meminfo",
)
for path in PATHS:
    st = os.stat(path)
    log(f"file {path} {st.st_dev} {st.st_ino}")
play(lambda moves, observation: None)
