"""Hostile bot: on its second move it opens 16 loopback TCP connections in
its network namespace and fills their buffers without reading them. The
buffers count against the host's one TCP memory limit (net.ipv4.tcp_mem,
/proc/net/sockstat's "mem", in pages), not against the bot's memory cgroup:
seats doing this squeeze every TCP connection of the host (the worker's
PostgreSQL and Redis ones). It logs "tcp refused: ERRNO", or "pinned N
pages of host TCP memory" (the rise of sockstat's "mem", where it can read
it), then exits
(expected forfeit: exit)."""
import errno
import json
import socket
import sys

CONNECTIONS = 16


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def host_tcp_pages():
    """sockstat's "mem", or None: a ready bot has no /proc/self/net (decision
    267), and the connections are the attack, not this measure of it."""
    try:
        with open("/proc/self/net/sockstat") as f:
            for line in f:
                if line.startswith("TCP:"):
                    fields = line.split()
                    return int(fields[fields.index("mem") + 1])
    except OSError:
        return None
    return 0


def hog():
    before = host_tcp_pages()
    held = []
    try:
        server = socket.create_server(("127.0.0.1", 0), backlog=CONNECTIONS)
        for _ in range(CONNECTIONS):
            client = socket.create_connection(server.getsockname())
            accepted, _ = server.accept()
            held += [client, accepted]
            client.setblocking(False)
            try:
                while True:
                    client.send(b"x" * 65536)
            except BlockingIOError:
                pass
    except OSError as exc:
        sys.stderr.write(f"tcp refused: {errno.errorcode.get(exc.errno, exc.errno)}\n")
        return
    after = host_tcp_pages()
    pinned = "an unknown number of" if before is None or after is None else after - before
    sys.stderr.write(f"pinned {pinned} pages of host TCP memory in {CONNECTIONS} connections\n")


moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        reply({"type": "ready"})
    elif message["type"] == "act":
        moves += 1
        if moves == 2:
            hog()
            sys.stderr.flush()
            sys.exit(0)
        reply({"type": "action", "action": message["legal"][0]})
    else:
        break
