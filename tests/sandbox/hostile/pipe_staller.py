"""Hostile bot: stalls the runner on its own stdin. After "start" it shrinks
its stdin pipe to one page (fcntl F_SETPIPE_SZ, open to anyone holding an
end) and from then on never consumes it: it peeks at the pipe with tee(2)
and answers every act it sees there. The unread messages pile up until the
runner's next write no longer fits; a runner that writes with a blocking
write() then hangs forever, before the move clock even starts.

With config.json {"mode": "never_read"} it does not even peek: it answers
"ready", shrinks its pipe and sleeps without reading (for the 'end' test)."""
import ctypes
import fcntl
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
F_SETPIPE_SZ = fcntl.F_SETPIPE_SZ
SPLICE_F_NONBLOCK = 2

libc = ctypes.CDLL(None, use_errno=True)
libc.tee.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_uint]
libc.tee.restype = ctypes.c_ssize_t


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read_start_line():
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(0, 1)  # one byte at a time: nothing past the line is consumed
        if not chunk:
            sys.exit(0)
        data += chunk
    return json.loads(data)


def peek(copy_r, copy_w):
    """Everything in stdin's pipe, left in place for the writer to choke on."""
    copied = libc.tee(0, copy_w, 1 << 20, SPLICE_F_NONBLOCK)
    if copied <= 0:
        return b""
    data = b""
    while len(data) < copied:
        data += os.read(copy_r, copied - len(data))
    return data


def main():
    try:
        with open(os.path.join(HERE, "config.json")) as f:
            mode = json.load(f).get("mode", "peek")
    except FileNotFoundError:
        mode = "peek"
    read_start_line()
    # its own pipe before it answers ready: after, the sandbox refuses new
    # pipes (decision 237)
    copy_r, copy_w = os.pipe()
    fcntl.fcntl(0, F_SETPIPE_SZ, 4096)
    sys.stderr.write(f"stdin pipe shrunk to {fcntl.fcntl(0, fcntl.F_GETPIPE_SZ)} bytes\n")
    reply({"type": "ready"})
    if mode == "never_read":
        time.sleep(600)
        return
    fcntl.fcntl(copy_w, F_SETPIPE_SZ, 1 << 16)
    answered = 0
    while True:
        lines = peek(copy_r, copy_w).split(b"\n")[:-1]
        for line in lines[answered:]:
            message = json.loads(line)
            if message["type"] == "act":
                reply({"type": "action", "action": message["legal"][0]})
                sys.stderr.write(f"answered act {answered + 1} without reading it\n")
            answered += 1
        time.sleep(0.005)


if __name__ == "__main__":
    main()
