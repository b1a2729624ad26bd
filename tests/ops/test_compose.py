"""docker-compose.yml, as Debian's docker-compose (1.29) parses it: valid
with the two variables .env must set, refused without them, and the services,
health checks, start order, named volumes and the worker's (only) relaxed
confinement that docs/operations.md describes. No Docker daemon needed."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

from tests.ops.procs import ROOT

COMPOSE = shutil.which("docker-compose")
ENV = {"SECRET_KEY": "compose-test-not-a-secret", "POSTGRES_PASSWORD": "compose-test-password"}


@pytest.fixture(scope="module")
def compose():
    if COMPOSE is None:
        message = "docker-compose is not installed (scripts/install-system-packages.sh installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        clean = {k: v for k, v in os.environ.items() if k not in ENV and not k.startswith("COMPOSE_")}
        clean.update(env if env is not None else ENV)
        return subprocess.run(
            [COMPOSE, "-f", "docker-compose.yml", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
        )

    return run


@pytest.fixture(scope="module")
def config(compose) -> dict:
    result = compose("config")
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def test_the_file_is_valid(compose):
    result = compose("config", "-q")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("missing", sorted(ENV))
def test_the_secrets_are_required(compose, missing):
    result = compose("config", "-q", env={k: v for k, v in ENV.items() if k != missing})
    assert result.returncode != 0
    assert missing in result.stdout + result.stderr


def test_services_health_checks_and_order(config):
    services = config["services"]
    assert set(services) == {"db", "redis", "cache", "migrate", "collectstatic", "web", "proxy", "worker", "scheduler"}
    for name in ("db", "redis", "cache", "web", "proxy", "worker"):
        check = services[name].get("healthcheck")
        assert check and check["test"] and check.get("interval"), f"{name} has no health check"
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert services["migrate"]["restart"] == "no"
    for name in ("web", "worker", "scheduler"):
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully"
        assert deps["redis"]["condition"] == "service_healthy"
    assert "migrate" in services["migrate"]["command"]
    assert services["web"]["command"][:2] == ["gunicorn", "config.wsgi:application"]
    assert "python:config.gunicorn" in services["web"]["command"]  # sync workers, JSON access logs
    assert services["proxy"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert services["proxy"]["depends_on"]["collectstatic"]["condition"] == "service_completed_successfully"
    assert services["worker"]["depends_on"]["cache"]["condition"] == "service_healthy"
    assert "allkeys-lru" in services["cache"]["command"] and "--maxmemory" in services["cache"]["command"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "config", "worker"]
    assert services["scheduler"]["command"][:4] == ["celery", "-A", "config", "beat"]
    assert "--appendonly" in services["redis"]["command"]


def test_settings_come_from_the_environment(config):
    services = config["services"]
    for name in ("migrate", "web", "worker", "scheduler"):
        env = services[name]["environment"]
        assert env["CACHE_URL"] == "redis://cache:6379/0"
        assert env["CARDROOM_PROXY_SSL_HEADER"] == "X-Forwarded-Proto"
        assert env["DATABASE_URL"] == f"postgres://cardroom:{ENV['POSTGRES_PASSWORD']}@db:5432/cardroom"
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379/")
        assert env["SECRET_KEY"] == ENV["SECRET_KEY"]
        assert env["CARDROOM_SANDBOX"] == "bwrap"
        # Rate limits count in Redis, shared by every web process (not in each one's memory).
        scheme, location = env["CACHE_URL"].split("://", 1)
        assert scheme in ("redis", "rediscache", "rediss")
        assert location != env["CELERY_BROKER_URL"].split("://", 1)[1]  # not the broker's database
    assert services["db"]["environment"]["POSTGRES_PASSWORD"] == ENV["POSTGRES_PASSWORD"]


def test_named_volumes(config):
    assert set(config["volumes"]) == {"pgdata", "redisdata", "media", "static"}

    def mounts(name):
        return {v.split(":")[0]: v.split(":")[1] for v in config["services"][name]["volumes"]}

    assert mounts("db")["pgdata"] == "/var/lib/postgresql/data"
    assert mounts("redis")["redisdata"] == "/data"
    for name in ("web", "worker", "scheduler", "migrate"):
        assert mounts(name)["media"] == "/data/media"
    assert mounts("collectstatic")["static"] == "/data/var/static"
    assert config["services"]["proxy"]["volumes"][0] == "static:/data/var/static:ro"


def test_only_the_worker_relaxes_its_confinement_and_gains_nothing(config):
    services = config["services"]
    assert set(services["worker"]["security_opt"]) == {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"}
    for name, service in services.items():
        assert not service.get("privileged"), name
        assert not service.get("cap_add"), name
        if name != "worker":
            assert not service.get("security_opt"), name
    # Only the proxy faces clients: gunicorn's port is never published (a
    # slow client facing sync workers holds one each).
    assert [p["target"] if isinstance(p, dict) else int(str(p).rsplit(":", 1)[1]) for p in services["proxy"]["ports"]] == [80, 443]
    assert all(not service.get("ports") for name, service in services.items() if name != "proxy")
