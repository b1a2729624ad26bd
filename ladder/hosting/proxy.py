"""Debian's nginx in front of a local gunicorn, with the repository's proxy
configuration (deploy/nginx/cardroom.conf and locations.conf, the same files
the proxy container includes), on loopback ports: for the proxy tests and
``make load-test``. Not used by the running platform.

    with LocalProxy(upstream_port=8001, var_dir=Path("var")) as proxy:
        urllib.request.urlopen(f"http://127.0.0.1:{proxy.port}/api/games/")
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NGINX_DIR = ROOT / "deploy" / "nginx"


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def render_config(*, port: int, upstream_port: int, var_dir: Path, workdir: Path, workers: int = 1) -> str:
    """The main configuration: everything of our own in the included files,
    plus where this nginx listens, which gunicorn it proxies to, and where
    it keeps its pid, logs and temp files (all in ``workdir``)."""
    # (nginx makes these itself, owned by its worker user)
    temp = {name: workdir / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    return f"""
daemon off;
worker_processes {workers};
pid {workdir / "nginx.pid"};
error_log {workdir / "error.log"} warn;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    client_body_temp_path {temp["client_body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    proxy_cache_path {workdir / "cache"} levels=1:2 keys_zone=cardroom_public:16m max_size=256m inactive=10m use_temp_path=off;
    include {NGINX_DIR / "cardroom.conf"};
    access_log {workdir / "access.log"} cardroom_json buffer=64k flush=1s;
    upstream cardroom_web {{ server 127.0.0.1:{upstream_port}; }}
    server {{
        listen 127.0.0.1:{port};
        set $cardroom_var_dir {var_dir};
        include {NGINX_DIR / "locations.conf"};
    }}
}}
"""


def half_open(port: int, n: int) -> socket.socket:
    """A connection that never finishes its request, the way a slow client
    holds on: stopped in its headers (odd ``n``) or in its body (even ``n``)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    if n % 2:
        s.sendall(b"GET /api/games/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    else:
        s.sendall(b"POST /api/auth/token/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100000\r\n\r\n{\"username\": ")  # fmt: skip
    return s


class LocalProxy:
    def __init__(self, *, upstream_port: int, var_dir: Path, port: int | None = None, workers: int = 1):
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (scripts/install-system-packages.sh installs it)")
        self.binary = binary
        self.port = port or _free_port()
        self.upstream_port = upstream_port
        self.var_dir = Path(var_dir)
        self.workers = workers
        self.proc: subprocess.Popen | None = None
        self.workdir: Path | None = None

    def start(self, timeout: float = 30.0) -> LocalProxy:
        self.workdir = Path(tempfile.mkdtemp(prefix="cardroom-nginx-"))
        self.workdir.chmod(0o755)  # (a worker running as nobody reads its temp files)
        conf = self.workdir / "nginx.conf"
        conf.write_text(
            render_config(port=self.port, upstream_port=self.upstream_port, var_dir=self.var_dir,
                          workdir=self.workdir, workers=self.workers)
        )  # fmt: skip
        check = subprocess.run([self.binary, "-t", "-q", "-c", str(conf), "-e", str(self.workdir / "error.log")],
                               capture_output=True, text=True, timeout=30)  # fmt: skip
        if check.returncode != 0:
            raise RuntimeError(f"nginx refused its configuration: {check.stderr}")
        self.proc = subprocess.Popen(
            [self.binary, "-c", str(conf), "-e", str(self.workdir / "error.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited ({self.proc.returncode}): {self.proc.stderr.read().decode()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"nginx did not listen on 127.0.0.1:{self.port} within {timeout} s")

    def error_log(self) -> str:
        try:
            return (self.workdir / "error.log").read_text()[-4000:] if self.workdir else ""
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: the master stops its workers
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if self.proc is not None and self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def __enter__(self) -> LocalProxy:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
