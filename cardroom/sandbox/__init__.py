"""The sandbox for untrusted bot programs (``CARDROOM_SANDBOX=bwrap``).

Every bot process runs

* as its own unprivileged host uid, leased from a pool
  (``CARDROOM_SANDBOX_UIDS``, 1920000000-1920000999 by default: outside
  every range systemd and Debian allocate; the probe refuses a pool that an
  account, group or subordinate-id range of the machine uses) with ``flock``
  lock files, so that no two bots running at the same time, in any worker
  process, ever share a uid (``RLIMIT_NPROC`` counts per uid);
* inside bubblewrap: new user, pid, network, ipc, uts (and cgroup) namespaces,
  so no network at all (only a private loopback with nothing listening), no
  view of the host's processes, a read-only root that is its runtime's tree
  of an image in memory (``image``: that runtime's files only, on a
  read-only ``noatime`` tmpfs, so no read leaves a trace), the bot's own
  files read-only at ``/bot`` (hard links made for this run, on a tmpfs
  too), a ``/proc`` with the host's files covered (``procview``), a private ``/tmp``, a
  read-only ``/dev`` holding the usual character devices (one folder
  prepared once per host, ``devdir``; else the same entries built per
  bot) and a tiny
  ``/dev/shm`` (both tmpfs mounts limited in size and in inodes), no ptys
  and no ``/proc/sys`` (host-wide quotas and counters), an empty environment but for ``PATH``, ``LANG``, ``HOME``,
  ``TMPDIR`` and ``PYTHONDONTWRITEBYTECODE``/``PYTHONUNBUFFERED``; no
  capabilities, ``no_new_privs``, no user namespaces of its own
  (``--disable-userns``, bubblewrap 0.8+); ``--die-with-parent`` and
  ``--new-session``;
* under rlimits (address space, CPU seconds, processes, file size, open
  files, no core dumps) and in its own cgroups (v1 or v2, detected once):
  memory, pids, cpu (one core's worth for all its processes together) and
  freezer (``pause``/``resume``: the players freeze a bot whenever it is not
  due to answer, so it can neither think on the others' time nor take their
  CPU). A limit this machine cannot apply makes the probe refuse to run
  bots, unless the operator opts into ``CARDROOM_SANDBOX_WEAK_LIMITS=1``.

Start-up, in order: lease a uid; copy the bot's files to
``<state>/runs/uid-N`` (root-owned, readable by the bot's group only); run
``bot-exec --netns-fd=N --uid=… --gid=… --as=… -- bwrap … --as-pid-1 …``
with a vfork: bot-exec (``botexec.py``, a C program with no C library)
joins an empty network namespace of the worker's pool (``netns.py``), drops
to the bot's uid and gid with no groups, sets the rlimits on itself and
becomes bwrap (no ``preexec_fn`` in the threaded runner; setting rlimits
from outside would need CAP_SYS_RESOURCE, which root lacks on some
machines). Where bot-exec cannot be built, ``prlimit --as=… -- bwrap …``
runs as the bot's uid instead (Popen ``user=``, a fork), and bwrap makes
the network namespace. The bot is pid 1 of its pid namespace (``--as-pid-1``: no init
process to fork, which is measurably faster to start); when it exits, the
kernel kills everything else in the namespace. bwrap reports the bot's host
pid on ``--info-fd``; we move it into the bot's cgroups while its interpreter
starts up, and only then let its code run. The bot's stdin and stdout are
not handed to bwrap: they travel over a Unix socket (SCM_RIGHTS) to a tiny
``sitecustomize`` shim that waits for them inside the bot's own interpreter,
before any of the bot's code, and puts them on fds 0 and 1. So only the bot
holds them (the outer bwrap would otherwise keep them open, and a bot closing
its stdout or stdin would never look closed), and the wait is what holds the
bot's code back until the cgroups are set (for a non-Python program,
bwrap's ``--block-fd`` does that instead).

Every bot's first program inside the sandbox is bot-exec again
(``--stdio-socket``): it installs the start-up gate's seccomp filter and
sends its listener to the worker over that socket before the bot runs; the
worker (``startup_gate``) lets new pipes, sockets, memfds, shared memory
and pidfds be made until the bot answers ``ready``, and refuses them with
EPERM after (decision 237). Then it hands a node or native bot its stdin
and stdout itself, or executes a Python bot's interpreter at once.

Clean-up (``BwrapProcess.kill``): SIGKILL the bot, pid 1 of its namespace,
first (the kernel then kills every process of the namespace, daemons
included), then the outer bwrap; reap both (the runner is made a child
subreaper so the bot is reaped even if the outer bwrap died first: it is
waited for through its pidfd, never by bare pid); kill whatever is left in
the bot's cgroups (and, had pid 1 not been seen to exit, in its pid
namespace): never "every process of the uid", which on a host could name a
process that is not the bot's; unmount its /tmp and /dev/shm; remove the
cgroups and the run folder; release the uid.

``get_launcher()`` picks the launcher from ``CARDROOM_SANDBOX``; the sandbox
is probed once per process, and when it cannot work ``SandboxUnavailable``
says what failed and how to fix it: there is never a silent fallback.
``python -m cardroom.sandbox`` prints the probe report.

The modules, by concern: ``config`` (settings, errors, the state folder),
``uids`` (the uid pool), ``cgroups`` (per-bot cgroups: memory, pids, cpu,
freezer), ``tmpfs`` (the bot's inode-limited /tmp and /dev/shm), ``devdir``
(the bots' prepared, read-only /dev), ``image`` (each runtime's files, in
memory, the bot's root), ``procview`` (the host's /proc files covered),
``startup_gate`` (the calls allowed only before ``ready``), ``reaping`` (killing
and reaping a bot's processes, sweeping stale leftovers), ``shim`` (the
stdin/stdout hand-over), ``bwrap`` (the bwrap command line and the
running bot), ``probe`` (the probe report and ``get_launcher``). Everything
public is re-exported here: import it from ``cardroom.sandbox``.
"""

from __future__ import annotations

from .bwrap import BwrapLauncher, BwrapProcess, UnsandboxedLauncher
from .cgroups import _Controller
from .config import (
    BOT_DIR,
    BOT_ENV,
    DEFAULT_STATE_DIR,
    DEFAULT_UIDS,
    MODES,
    NONE_WARNING,
    START_TIMEOUT_S,
    WEAK_LIMITS_ENV,
    SandboxError,
    SandboxUnavailable,
    _prepare_state_dir,
    runs_dir,
    state_dir,
    uid_collisions,
    uid_range,
    weak_limits_allowed,
)
from .probe import DOCKER_HINT, FIX_NONE, LimitStatus, ProbeReport, _explain, get_launcher, local_launcher, main, probe
from .reaping import kill_namespace, processes_of_uid, sweep_stale
from .shim import SHIM, SHIM_DIR, SHIM_ENV
from .uids import UidLease, lease_uid

__all__ = [
    "BOT_DIR",
    "BOT_ENV",
    "DEFAULT_STATE_DIR",
    "DEFAULT_UIDS",
    "DOCKER_HINT",
    "FIX_NONE",
    "MODES",
    "NONE_WARNING",
    "SHIM",
    "SHIM_DIR",
    "SHIM_ENV",
    "START_TIMEOUT_S",
    "WEAK_LIMITS_ENV",
    "LimitStatus",
    "BwrapLauncher",
    "BwrapProcess",
    "ProbeReport",
    "SandboxError",
    "SandboxUnavailable",
    "UidLease",
    "UnsandboxedLauncher",
    "_Controller",
    "_explain",
    "_prepare_state_dir",
    "get_launcher",
    "local_launcher",
    "kill_namespace",
    "lease_uid",
    "main",
    "probe",
    "processes_of_uid",
    "runs_dir",
    "state_dir",
    "sweep_stale",
    "uid_collisions",
    "uid_range",
    "weak_limits_allowed",
]
