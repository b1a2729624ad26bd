"""The reverse proxy (deploy/proxy, with deploy/nginx's settings): Debian's real nginx with the repository's
configuration in front of a real gunicorn (config/gunicorn.py, sync workers),
on loopback ports. Half-open clients hold nginx connections, not gunicorn
workers; oversized bodies are refused by nginx before the app reads a byte;
static files come from STATIC_ROOT without the app; no Server version leaks;
the public-read microcache keeps shared pages a second and nothing else."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings

from ladder.hosting.proxy import NGINX_DIR, LocalProxy, half_open, nginx_binary
from tests.ops.procs import ROOT, free_port, wait_for

pytestmark = pytest.mark.slow

GUNICORN = Path(sys.executable).parent / "gunicorn"
UPSTREAM_WORKERS = 2


def _get(port: int, path: str, timeout: float) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", path)
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


@pytest.fixture(scope="module")
def stack():
    if nginx_binary() is None:
        message = "nginx is not installed (scripts/install-system-packages.sh installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    # (not pytest's tmp_path: nginx's workers, as nobody, must reach the static files)
    var = Path(tempfile.mkdtemp(prefix="cardroom-proxy-test-"))
    (var / "static" / "cardroom").mkdir(parents=True)
    (var / "static" / "cardroom" / "probe.txt").write_text("served by nginx\n")
    var.chmod(0o755)
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "proxy-test-not-a-secret",
        "DEBUG": "0",
        "CARDROOM_VAR_DIR": str(var),
        "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}",
        "CACHE_URL": "locmemcache://",
        "CELERY_BROKER_URL": f"sqla+sqlite:///{var / 'broker.sqlite3'}",
        "LOG_LEVEL": "WARNING",
    }
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    log = open(var / "gunicorn.log", "wb")
    gunicorn = subprocess.Popen(
        [str(GUNICORN), "config.wsgi:application", "--config", "python:config.gunicorn",
         "--bind", f"127.0.0.1:{port}", "--workers", str(UPSTREAM_WORKERS)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip

    def up():
        try:
            return _get(port, "/api/games/", 5).status == 200
        except OSError:
            return False

    proxy = None
    try:
        wait_for(up, 60, "gunicorn to answer", log=lambda: (var / "gunicorn.log").read_text())
        proxy = LocalProxy(upstream_port=port, var_dir=var).start()
        yield {"proxy": proxy.port, "gunicorn": port, "nginx": proxy}
    finally:
        if proxy is not None:
            proxy.stop()
        os.killpg(gunicorn.pid, 15)
        gunicorn.wait(timeout=30)
        log.close()
        shutil.rmtree(var, ignore_errors=True)


def _half_open(port: int, n: int) -> list[socket.socket]:
    """n connections that never finish their request: half of them stop in
    the headers, half in the body (the two ways a slow client holds on)."""
    return [half_open(port, i) for i in range(n)]


def test_half_open_clients_do_not_block_other_requests(stack):
    slow = _half_open(stack["proxy"], 50)
    try:
        time.sleep(1)  # every one of them is in nginx's hands now

        def timed(_):
            t0 = time.monotonic()
            status = _get(stack["proxy"], "/api/games/", 10).status
            return status, time.monotonic() - t0

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(timed, range(40)))
        assert [status for status, _ in results] == [200] * 40
        # (generous: the machine is shared; blocked, each would take >= 10 s)
        assert max(seconds for _, seconds in results) < 5
    finally:
        for s in slow:
            s.close()


def test_without_the_proxy_the_same_clients_block_gunicorn(stack):
    """The control: what the proxy prevents. Two half-open connections per
    sync worker straight to gunicorn, and a trivial GET gets no answer."""
    slow = _half_open(stack["gunicorn"], 2 * UPSTREAM_WORKERS)
    try:
        time.sleep(1)
        with pytest.raises(TimeoutError):
            _get(stack["gunicorn"], "/api/games/", 3)
    finally:
        for s in slow:
            s.close()
    # the workers are free again once those clients go
    wait_for(lambda: _get(stack["gunicorn"], "/api/games/", 10).status == 200, 60, "gunicorn to recover")


def _post(port: int, path: str, size: int) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", path, body=b"x" * size, headers={"Content-Type": "application/octet-stream"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_an_oversized_body_gets_413_from_the_proxy(stack):
    status, headers, body = _post(stack["proxy"], "/api/bots/1/versions/", 12 * 1024 * 1024)
    assert status == 413
    assert headers["Content-Type"] == "application/json"
    assert b"larger than the limit" in body
    assert "Content-Security-Policy" not in headers  # the app never saw it
    assert "client intended to send too large body" in stack["nginx"].error_log()
    # a body within the limit goes through to the app, which answers itself
    status, headers, _ = _post(stack["proxy"], "/api/bots/1/versions/", 1024 * 1024)
    assert status != 413
    assert "Content-Security-Policy" in headers


def test_an_upload_refused_before_its_body_is_read_is_answered_not_reset(stack):
    """The app refuses an upload without a token from its headers alone; the
    unread body must not turn that answer into the proxy's 502 (gunicorn
    closing with unread data resets the connection: ladder.request_body)."""
    answers = []
    for i in range(100):
        status, headers, body = _post(stack["proxy"], "/api/bots/1/versions/", (1 + i % 8) * 1024 * 1024)
        answers.append((status, headers.get("Content-Type"), body[:80]))
    wrong = [(i, answer) for i, answer in enumerate(answers) if answer[:2] != (401, "application/json")]
    assert wrong == [], f"{len(wrong)} of {len(answers)} refused uploads were not answered by the app: {wrong[:3]}"


def test_the_body_limit_matches_the_upload_limit():
    text = (NGINX_DIR / "cardroom.conf").read_text()
    size = re.search(r"^client_max_body_size (\d+)m;", text, re.M)
    assert size, "cardroom.conf sets client_max_body_size in MiB"
    limit = int(size.group(1)) * 1024 * 1024
    # a whole package and its multipart envelope fit; the app's own limits do the rest
    assert settings.CARDROOM_MAX_UPLOAD_BYTES < limit <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def test_static_files_come_from_the_proxy_and_no_version_leaks(stack):
    static = _get(stack["proxy"], "/static/cardroom/probe.txt", 10)
    assert static.status == 200 and static.body == b"served by nginx\n"
    page = _get(stack["proxy"], "/api/games/", 10)
    assert page.status == 200
    assert page.getheader("Server") == "nginx"  # no version, and not gunicorn's
    direct = _get(stack["gunicorn"], "/api/games/", 10)
    assert direct.getheader("Server") == "gunicorn"  # what the proxy hides


@pytest.mark.parametrize("site", ["http", "https"])
def test_the_proxy_containers_configuration_is_valid(site, tmp_path):
    """The compose proxy's own start-up script (deploy/proxy/entrypoint.sh)
    writes its configuration from the template, plain or with TLS (a
    throw-away certificate), and nginx -t accepts it; only the container's
    absolute paths are moved into tmp_path."""
    binary = nginx_binary()
    if binary is None or shutil.which("openssl") is None:
        pytest.skip("needs nginx and openssl")
    proxy_dir = ROOT / "deploy" / "proxy"
    settings_dir, run, tls = tmp_path / "cardroom", tmp_path / "run", tmp_path / "tls"
    for d in (settings_dir, run, tls):
        d.mkdir()
    for name in ("cardroom.conf", "locations.conf"):
        shutil.copy(NGINX_DIR / name, settings_dir / name)
    template = (proxy_dir / "compose.conf.template").read_text()
    template = template.replace("/etc/nginx/cardroom/", f"{settings_dir}/").replace("/run/cardroom-proxy/", f"{run}/")
    (tmp_path / "template").write_text(template)
    if site == "https":
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
             "-keyout", str(tls / "privkey.pem"), "-out", str(tls / "fullchain.pem")],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
    env = {
        "PATH": f"{Path(binary).parent}:{os.environ['PATH']}",
        "CARDROOM_PROXY_CHECK": "1",
        "CARDROOM_PROXY_TEMPLATE": str(tmp_path / "template"),
        "CARDROOM_PROXY_CONF": str(run / "nginx.conf"),
        "CARDROOM_PROXY_TLS_DIR": str(tls),
        "CARDROOM_PROXY_SETTINGS": str(settings_dir),
    }
    result = subprocess.run(
        ["sh", str(proxy_dir / "entrypoint.sh")], env=env, capture_output=True, text=True, timeout=30
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"serving {site}" in result.stdout
    conf = (run / "nginx.conf").read_text()
    assert "keys_zone=cardroom_public" in conf and f"include {settings_dir}/locations.conf;" in conf
    if site == "https":
        assert "ssl_certificate" in conf and "return 301 https://" in conf
    else:
        assert "ssl_certificate" not in conf


def _get_with(port: int, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    response.body = response.read()
    conn.close()
    return response


def test_the_proxy_keeps_a_shared_public_page_for_a_second(stack):
    port = stack["proxy"]
    first = _get_with(port, "/api/matches/?page_size=7")
    assert first.status == 200
    assert first.getheader("X-Cache") in ("MISS", "EXPIRED")
    assert first.getheader("X-Accel-Expires") is None  # for nginx only
    again = _get_with(port, "/api/matches/?page_size=7")
    assert again.getheader("X-Cache") == "HIT"
    assert again.body == first.body and again.getheader("ETag") == first.getheader("ETag")
    # A browser revalidating gets its 304 from the proxy too.
    conditional = _get_with(port, "/api/matches/?page_size=7", {"If-None-Match": first.getheader("ETag")})
    assert conditional.status == 304
    # Asked for as HTML, the API's JSON is not what comes back from the cache.
    html = _get_with(port, "/api/matches/?page_size=7", {"Accept": "text/html"})
    assert html.getheader("X-Cache") != "HIT"
    # Once the second is up (nginx counts whole seconds: 1-2 s), the next
    # visitor's request goes to the app again.
    time.sleep(2.2)
    later = _get_with(port, "/api/matches/?page_size=7")
    assert later.getheader("X-Cache") in ("EXPIRED", "STALE", "UPDATING")


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": "Token not-a-real-token"}, {"Cookie": "sessionid=abc"}, {"Cookie": "messages=abc"}],
    ids=["token", "session", "messages"],
)
def test_the_proxy_never_answers_a_request_with_credentials_from_its_cache(stack, headers):
    port = stack["proxy"]
    _get_with(port, "/api/matches/?page_size=8")
    assert _get_with(port, "/api/matches/?page_size=8").getheader("X-Cache") == "HIT"
    response = _get_with(port, "/api/matches/?page_size=8", headers)
    assert response.getheader("X-Cache") == "BYPASS"
    if "Authorization" in headers:
        assert response.status == 401  # the app's answer to a wrong token, not the cached page


def test_the_proxy_keeps_no_page_the_app_does_not_mark_as_shared(stack):
    port = stack["proxy"]
    # Not a cached public read (no X-Accel-Expires): every request reaches the app.
    for _ in range(2):
        assert _get_with(port, "/api/games/").getheader("X-Cache") == "MISS"
    # A page that sets a cookie (the sign-in form's CSRF cookie) is never kept.
    for _ in range(2):
        page = _get_with(port, "/login/")
        assert page.status == 200 and page.getheader("Set-Cookie")
        assert page.getheader("X-Cache") == "MISS"


def test_absolute_links_keep_the_public_host_and_port(stack):
    """The app builds absolute links (the API root, pagination, reset
    e-mails) from the Host the proxy passes on: with the port the client
    used (issue 25, item 9: the compose stack's :8080 was lost)."""
    port = stack["proxy"]
    root = _get_with(port, "/api/", {"Host": f"localhost:{port}"})
    assert root.status == 200
    links = json.loads(root.body)
    assert links["matches"] == f"http://localhost:{port}/api/matches/", links
    # The proxy's cache keeps one entry per host and port: a page built for
    # one is never served to a client that asked another.
    path = "/api/matches/?page_size=9"
    _get_with(port, path, {"Host": f"localhost:{port}"})
    assert _get_with(port, path, {"Host": f"localhost:{port}"}).getheader("X-Cache") == "HIT"
    assert _get_with(port, path, {"Host": "localhost:1"}).getheader("X-Cache") == "MISS"


def test_the_proxy_passes_the_apps_gzip_on_as_it_is_and_keeps_each_encoding_apart(stack):
    """A shared page is compressed once, by the app, when it caches it:
    nginx keeps the gzip and the plain copy apart (the app's Vary) and never
    compresses a page again (its own gzip would also weaken the ETag)."""
    import gzip

    port, path = stack["proxy"], "/matches/"
    html = {"Accept": "text/html"}
    plain = _get_with(port, path, html)
    assert plain.status == 200 and plain.getheader("Content-Encoding") is None and len(plain.body) > 1024
    _get_with(port, path, {**html, "Accept-Encoding": "gzip"})
    packed = _get_with(port, path, {**html, "Accept-Encoding": "gzip"})
    assert packed.getheader("X-Cache") == "HIT" and packed.getheader("Content-Encoding") == "gzip"
    assert gzip.decompress(packed.body) == plain.body  # compressed once, by the app
    assert packed.getheader("ETag").endswith('-gz"') and not packed.getheader("ETag").startswith("W/")
    again = _get_with(port, path, html)
    assert again.getheader("X-Cache") == "HIT" and again.getheader("Content-Encoding") is None and again.body == plain.body
