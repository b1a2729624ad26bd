"""Log-tail bot: plays legal moves; when told the match has ended it writes
config.json's "bulk_bytes" of filler to stderr, then a known tail ("tail"
lines, the last one "LAST LINE"), and exits at once. The runner must keep
all of it (up to the log cap), however late the last bytes arrive."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def main():
    with open(os.path.join(HERE, "config.json")) as f:
        config = json.load(f)
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "start":
            print(json.dumps({"type": "ready"}), flush=True)
        elif message["type"] == "act":
            print(json.dumps({"type": "action", "action": message["legal"][0]}), flush=True)
        else:
            filler = (b"." * 99 + b"\n") * (config["bulk_bytes"] // 100)
            tail = b"".join(b"tail line %d of %d\n" % (i, config["tail"]) for i in range(1, config["tail"] + 1))
            write_all(2, filler + tail + b"LAST LINE\n")
            os._exit(0)


if __name__ == "__main__":
    main()
