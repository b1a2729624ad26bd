"""Hostile bot: on its second move it creates 300,000 empty files in the
folder named in config.json ("path": /tmp or /dev/shm). An empty file uses
no page of a tmpfs, only kernel memory (an inode), so only an inode limit
stops it: the creation fails and the bot dies of it (expected forfeit:
crash). Had all the files fit, it would have played on."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = 300_000


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def create():
    with open(os.path.join(HERE, "config.json")) as f:
        folder = json.load(f)["path"]
    made = 0
    try:
        for i in range(FILES):
            os.close(os.open(os.path.join(folder, f"f{i}"), os.O_CREAT | os.O_WRONLY, 0o600))
            made += 1
    finally:
        sys.stderr.write(f"created {made} files in {folder}\n")
        sys.stderr.flush()


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 2:
            create()
            sys.stderr.write("ALL FILES CREATED\n")
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
