"""docker-compose.yml, as Debian's docker-compose (1.29) parses it: valid
with the two variables .env must set, refused without them, and the services,
health checks, start order, host networking, named volumes and the worker's
(only) relaxed confinement that docs/operations.md describes; the worker's
seccomp profile and its runtime wrapper (deploy/docker/). No Docker daemon
needed: tests/containers runs the stack for real (make test-containers)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

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

    def run(*args: str, env: dict[str, str] | None = None, files=("docker-compose.yml",)) -> subprocess.CompletedProcess:
        clean = {k: v for k, v in os.environ.items() if k not in ENV and not k.startswith("COMPOSE_")}
        clean.update(env if env is not None else ENV)
        return subprocess.run(
            [COMPOSE, *[a for f in files for a in ("-f", f)], *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
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


SERVICES = {"db", "redis", "cache", "migrate", "web", "proxy", "worker", "casual-worker", "scheduler", "scheduler-worker"}
SANDBOXED = {"worker", "casual-worker"}  # the services that run bots
WORKER_CAPS = {"CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL"}


def test_services_health_checks_and_order(config):
    services = config["services"]
    assert set(services) == SERVICES
    for name in SERVICES - {"migrate"}:
        check = services[name].get("healthcheck")
        assert check and check["test"] and check.get("interval"), f"{name} has no health check"
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert services["migrate"]["restart"] == "no"
    for name in ("web", "worker", "casual-worker", "scheduler", "scheduler-worker"):
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully"
        assert deps["redis"]["condition"] == "service_healthy"
    assert services["proxy"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert "migrate" in services["migrate"]["command"]
    assert services["web"]["command"][:2] == ["gunicorn", "config.wsgi:application"]
    assert "python:config.gunicorn" in services["web"]["command"]  # sync workers, JSON access logs
    assert services["worker"]["command"][0] == "cardroom-worker"  # celery worker, named after its container
    assert services["worker"]["depends_on"]["cache"]["condition"] == "service_healthy"
    # casual matches: their own worker, threads waiting on people (decision 135)
    casual = services["casual-worker"]["command"]
    assert casual[0] == "cardroom-worker" and casual[casual.index("-Q") + 1] == "casual"
    assert casual[casual.index("--pool") + 1] == "threads" and int(casual[casual.index("--concurrency") + 1]) >= 10
    assert "allkeys-lru" in services["cache"]["command"] and "--maxmemory" in services["cache"]["command"]
    assert services["scheduler"]["command"][:4] == ["celery", "-A", "config", "beat"]
    # the scheduler's tasks: their own queue and worker, never behind a match (decision 194)
    scheduling = services["scheduler-worker"]["command"]
    assert scheduling[0] == "cardroom-worker" and scheduling[scheduling.index("-Q") + 1] == "scheduler"
    assert "user" not in services["scheduler-worker"] and "runtime" not in services["scheduler-worker"]  # it runs no bot
    assert "--appendonly" in services["redis"]["command"]


def test_every_service_is_on_the_hosts_network_and_only_the_proxy_listens_outside(config):
    services = config["services"]
    for name, service in services.items():
        assert service.get("network_mode") == "host", name  # no bridge, no private addresses
        assert not service.get("ports"), name  # nothing to publish on the host's network
    assert "networks" not in config
    # gunicorn, PostgreSQL and Redis bind loopback; the proxy is the way in.
    assert "127.0.0.1:8000" in services["web"]["command"]
    for name in ("redis", "cache"):
        assert services[name]["command"][services[name]["command"].index("--bind") + 1] == "127.0.0.1"
    assert services["proxy"]["environment"]["PROXY_PORT"] == "8080"


def test_settings_come_from_the_environment(config):
    services = config["services"]
    for name in ("migrate", "web", "worker", "scheduler"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"] == f"postgres://cardroom:{ENV['POSTGRES_PASSWORD']}@127.0.0.1:5432/cardroom"
        assert env["CELERY_BROKER_URL"] == "redis://127.0.0.1:6379/0"
        assert env["SECRET_KEY"] == ENV["SECRET_KEY"]
        assert env["CARDROOM_SANDBOX"] == "bwrap"
        assert env["CARDROOM_PROXY_SSL_HEADER"] == "X-Forwarded-Proto"
        # Cached reads in the evicting cache Redis; the limits' counters in the broker's (another database).
        assert env["CACHE_URL"] == "redis://127.0.0.1:6380/0"
        assert env["LIMITS_CACHE_URL"].startswith("redis://127.0.0.1:6379/")
        assert env["LIMITS_CACHE_URL"] != env["CELERY_BROKER_URL"]
    assert services["db"]["environment"]["POSTGRES_PASSWORD"] == ENV["POSTGRES_PASSWORD"]


def test_ports_move_together(compose):
    env = {**ENV, "DB_PORT": "47432", "REDIS_PORT": "47379", "WEB_PORT": "47800", "PROXY_PORT": "47880"}
    result = compose("config", env=env)
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert services["web"]["environment"]["DATABASE_URL"].endswith("@127.0.0.1:47432/cardroom")
    assert services["worker"]["environment"]["CELERY_BROKER_URL"] == "redis://127.0.0.1:47379/0"
    assert services["db"]["environment"]["POSTGRES_PORT"] == "47432"
    assert "47379" in services["redis"]["command"]
    assert "127.0.0.1:47800" in services["web"]["command"]
    assert services["proxy"]["environment"]["WEB_PORT"] == "47800"


def test_named_volumes(config):
    assert set(config["volumes"]) == {"pgdata", "redisdata", "media", "sandbox"}

    def mounts(name):
        return {v.split(":")[0]: v.split(":")[1] for v in config["services"][name]["volumes"]}

    assert mounts("db")["pgdata"] == "/var/lib/postgresql/data"
    assert mounts("redis")["redisdata"] == "/data"
    for name in ("web", "worker", "scheduler", "migrate"):
        assert mounts(name)["media"] == "/data/media"
    # every worker container on a host shares one folder of uid leases
    for name in SANDBOXED:
        assert mounts(name)["sandbox"] == config["services"][name]["environment"]["CARDROOM_SANDBOX_DIR"]


def test_only_the_workers_relax_their_confinement_and_gain_nothing_they_do_not_need(config):
    services = config["services"]
    for name in SANDBOXED:
        worker = services[name]
        assert worker["runtime"] == "cardroom-bwrap"
        assert worker["cap_drop"] == ["ALL"] and set(worker["cap_add"]) <= WORKER_CAPS
        options = {o.replace(":", "=", 1) for o in worker["security_opt"]}
        assert options == {"no-new-privileges=true", "seccomp=deploy/docker/worker-seccomp.json", "apparmor=unconfined"}
        assert str(worker["user"]).split(":")[0] == "0"  # root in its container: it runs each bot as its own uid
        assert worker["environment"].get("CARDROOM_SANDBOX_WEAK_LIMITS", "0") == "0"  # every limit in force, or no bots
    for name, service in services.items():
        assert not service.get("privileged"), name
        if name not in SANDBOXED:
            assert not service.get("security_opt"), name
            assert not service.get("cap_add"), name
            assert not service.get("runtime"), name
            assert str(service.get("user", "")).split(":")[0] not in ("0", "root"), name  # the image's own user


def test_the_test_override_restarts_nothing_and_keeps_the_confinement(compose):
    result = compose("config", files=("docker-compose.yml", "docker-compose.test.yml"))
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert set(services) == SERVICES
    for name, service in services.items():
        assert service["restart"] == "no", name  # a killed worker stays dead
        assert service["network_mode"] == "host", name
    assert services["proxy"]["environment"]["PROXY_LISTEN"] == "127.0.0.1"
    for name in SANDBOXED:
        assert services[name]["runtime"] == "cardroom-bwrap" and services[name]["cap_drop"] == ["ALL"]
        assert int(services[name]["environment"]["CARDROOM_MATCH_LEASE_SECONDS"]) < 60


def test_the_workers_seccomp_profile_refuses_kernel_administration_and_allows_bubblewrap():
    profile = json.loads((ROOT / "deploy" / "docker" / "worker-seccomp.json").read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ALLOW"
    assert "SCMP_ARCH_X86_64" in profile["architectures"] and "SCMP_ARCH_X86" not in profile["architectures"]
    denied = {name for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ERRNO" for name in rule["names"]}
    assert {"keyctl", "bpf", "ptrace", "kexec_load", "init_module", "perf_event_open", "userfaultfd", "setns"} <= denied
    assert {"io_uring_setup", "open_by_handle_at", "fsopen", "reboot"} <= denied
    # What bubblewrap itself does (and h-seccomp's filter is loaded with):
    assert not denied & {"unshare", "clone", "clone3", "mount", "umount2", "pivot_root", "seccomp", "prctl", "pidfd_open"}
    assert all(rule.get("errnoRet") == 1 for rule in profile["syscalls"])  # EPERM, not a kill


def test_the_worker_runtime_unmasks_proc_and_opens_its_own_cgroups_only(tmp_path):
    """deploy/docker/cardroom-runc rewrites the container's OCI config on
    `create`, then runs runc with the same arguments (a stand-in runc here
    records them)."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    config = {
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
            {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["ro", "nosuid", "noexec", "nodev"]},
        ],
        "linux": {"maskedPaths": ["/proc/kcore", "/proc/keys"], "readonlyPaths": ["/proc/sys", "/proc/bus"]},
    }
    (bundle / "config.json").write_text(json.dumps(config))
    record = tmp_path / "args"
    fake_runc = tmp_path / "runc"
    fake_runc.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {record}\n")
    fake_runc.chmod(0o755)
    wrapper = ROOT / "deploy" / "docker" / "cardroom-runc"
    args = ["--root", "/run/x", "--log", "/tmp/log", "create", "--bundle", str(bundle), "--pid-file", "/tmp/pid", "c1"]
    env = {**os.environ, "CARDROOM_RUNC": str(fake_runc)}
    result = subprocess.run([sys.executable, str(wrapper), *args], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert record.read_text().splitlines() == args  # runc gets exactly what it was given
    rewritten = json.loads((bundle / "config.json").read_text())
    assert rewritten["linux"]["maskedPaths"] == [] and rewritten["linux"]["readonlyPaths"] == []
    mounts = {m["destination"]: m["options"] for m in rewritten["mounts"]}
    assert "ro" not in mounts["/sys/fs/cgroup"] and "rw" in mounts["/sys/fs/cgroup"]
    assert "ro" in mounts["/sys"]  # the rest of /sys stays read-only
    # Any other command passes through and changes nothing.
    (bundle / "config.json").write_text(json.dumps(config))
    result = subprocess.run([sys.executable, str(wrapper), "--root", "/run/x", "kill", "c1", "KILL"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and record.read_text().split() == ["--root", "/run/x", "kill", "c1", "KILL"]
    assert json.loads((bundle / "config.json").read_text()) == config
