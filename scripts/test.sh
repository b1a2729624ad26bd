#!/usr/bin/env bash
# The whole test suite, as `make test` (and so CI) runs it:
#   1. everything against PostgreSQL and Redis (the production stack), but
#      for the research interfaces' checks, which a full run starts first and
#      runs beside 1, 2 and 3 at the lowest CPU priority (they need no
#      database or broker, and keep at most two cores busy: they take what
#      the other parts leave idle; decision 272). In a full run 1 is two
#      processes (decision 289): the ladder tests that 2 repeats
#      (CARDROOM_TEST_PART=ladder: a database, a Redis database and a var
#      folder of their own) and the rest (=rest), which starts first;
#   2. the ladder suite again against SQLite (the embedded default), less the
#      tests marked any_database (what they check does not depend on the
#      database: pyproject.toml's markers); in a full run, 1's ladder part and
#      then 2 start beside 1's rest once 3 is over (or 1's rest, if sooner),
#      and their output is printed after 1's rest's;
#   3. the compose stack built and run for real (scripts/test-containers.sh),
#      from the start of a full run, beside 1 and 2, at nice 10 (its Docker
#      daemon, and so its builds and containers, inherit it): it shares
#      nothing with them (its own Docker daemon, ports, PostgreSQL and Redis)
#      and waits on builds and containers much of the time. Its output is
#      kept and printed after 2's, so each part's lines and pytest summary
#      stay together, and its status counts as before.
# CI must have both services (the machine starts them; we start them if they
# are installed but stopped). On a laptop without them, run 1 uses SQLite and
# the Redis-dependent tests say why they are skipped.
# Arguments go to pytest in runs 1 and 2 (e.g. -x, -k NAME); a run that they
# narrow to no test at all (pytest's exit 5) is not a failure then.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# Each part says how long it took, and pytest the slowest tests of passes 1
# and 2 and of the research interfaces: where the suite's time goes (its
# budget is 25 minutes) is in CI's log.
T0=$(date +%s)
took() { echo $(($(date +%s) - $1)); }
SLOWEST=--durations=15
PG_URL=${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/cardroom}
REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/14}
SQLITE_REDIS_URL=${REDIS_URL%/*}/13
LADDER_PG_URL=${PG_URL%/*}/cardroom_ladder
LADDER_REDIS_URL=${REDIS_URL%/*}/12
NARROWED=$#

pg_up() { $PY - "$PG_URL" <<'PYEOF' >/dev/null 2>&1
import sys, psycopg
psycopg.connect(sys.argv[1].rsplit("/", 1)[0] + "/postgres", connect_timeout=3).close()
PYEOF
}
redis_up() { $PY -c "import redis,sys; redis.Redis.from_url('$REDIS_URL', socket_timeout=3).ping()" >/dev/null 2>&1; }

start_services() {
  if ! pg_up && command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
  if ! redis_up && command -v redis-server >/dev/null; then
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /tmp --logfile /tmp/cardroom-redis.log || true
    sleep 1
  fi
}

# pytest with the given arguments; its status, except that "no test
# collected" (5) is fine when the caller's arguments narrowed the run.
run_pytest() {
  $PY -m pytest -q "$@"
  local code=$?
  if [ $code -eq 5 ] && [ "$NARROWED" -gt 0 ]; then
    echo "(no test of this run matches the arguments)"
    code=0
  fi
  return $code
}

# The container deployment, in the background with its own process group
# (job control on: Ctrl-C reaches it, and its trap tears the stack down).
CONTAINERS_LOG=$(mktemp /tmp/cardroom-test-containers.XXXXXX)
containers_pid=
containers_code=  # its status, once something has waited for it
start_containers() {
  set -m
  (
    nice -n 10 bash scripts/test-containers.sh
    code=$?
    echo "(the container deployment took $(took "$T0") s)"
    exit $code
  ) >"$CONTAINERS_LOG" 2>&1 &
  containers_pid=$!
  set +m
}
finish_containers() {  # waits (unless that was done), prints its output, returns its status
  local code=${containers_code:-0}
  [ -z "$containers_code" ] && { wait "$containers_pid" || code=$?; }
  echo "== the container deployment (make test-containers, run beside the other parts)"
  cat "$CONTAINERS_LOG"
  rm -f "$CONTAINERS_LOG"
  containers_pid=
  return $code
}
# The research interfaces' checks (tests/sdk/test_research_envs.py: OpenSpiel's
# playthroughs and random_sim_test, PettingZoo's and Gymnasium's checks in a
# venv of their own), run beside the other parts from the start of a full run,
# at nice 19 so that pass 1's timing tests keep their CPU; their output is
# printed after the SQLite pass's. Nothing is shared with pass 1: a database
# name, a Redis database, a var folder and a research venv of their own (pass
# 1's trained-bot tests reinstall the wheel into theirs).
RESEARCH=tests/sdk/test_research_envs.py
RESEARCH_LOG=$(mktemp /tmp/cardroom-test-research.XXXXXX)
research_pid=
start_research() {
  set -m
  (
    DATABASE_URL=${PG_URL%/*}/cardroom_research CELERY_BROKER_URL=${REDIS_URL%/*}/15 \
      CARDROOM_VAR_DIR=$PWD/var/test-research CARDROOM_RESEARCH_VENVS=$PWD/var/test-research/research-venv \
      nice -n 19 $PY -m pytest -q $SLOWEST "$RESEARCH"
    code=$?
    echo "(the research interfaces took $(took "$T0") s)"
    exit $code
  ) >"$RESEARCH_LOG" 2>&1 &
  research_pid=$!
  set +m
}
finish_research() {  # waits, prints its output, returns its status
  [ -z "$research_pid" ] && { rm -f "$RESEARCH_LOG"; return 0; }
  local code=0
  wait "$research_pid" || code=$?
  echo "== the research interfaces ($RESEARCH, run beside the other parts)"
  cat "$RESEARCH_LOG"
  rm -f "$RESEARCH_LOG"
  research_pid=
  return $code
}
# Passes 1 and 2 of a full run, in the background with job control (each its
# own process group, default signals: a bot must not inherit an ignored
# SIGINT from a shell's `&`), so that 1's ladder part and pass 2 can start
# while 1's rest runs.
pg_pid=
beside_pid=
SQLITE_LOG=$(mktemp /tmp/cardroom-test-sqlite.XXXXXX)
LADDER_LOG=$(mktemp /tmp/cardroom-test-pg-ladder.XXXXXX)
sqlite_pass() {
  DATABASE_URL=sqlite:///$PWD/var/test-sqlite/db.sqlite3 CELERY_BROKER_URL=$SQLITE_REDIS_URL CARDROOM_VAR_DIR=$PWD/var/test-sqlite \
    run_pytest $SLOWEST tests/ladder -m "not any_database" "$@"
}
# 1's ladder part, then pass 2, one after the other (one core's worth
# beside 1's rest): each one's output in its log with its end time; the
# status is the first failure's.
ladder_then_sqlite() {
  local code=0 sqlite_code=0
  DATABASE_URL=$LADDER_PG_URL CELERY_BROKER_URL=$LADDER_REDIS_URL CARDROOM_VAR_DIR=$PWD/var/test-pg-ladder CARDROOM_TEST_PART=ladder \
    run_pytest $SLOWEST tests/ladder >"$LADDER_LOG" 2>&1 || code=$?
  echo "(the PostgreSQL pass's ladder part ended $(took "$T0") s after the start)" >>"$LADDER_LOG"
  sqlite_pass >"$SQLITE_LOG" 2>&1 || sqlite_code=$?
  echo "(the SQLite pass ended $(took "$T0") s after the start)" >>"$SQLITE_LOG"
  [ "$code" -ne 0 ] && return $code
  return $sqlite_code
}
interrupted() {
  [ -n "$pg_pid" ] && kill -INT -- "-$pg_pid" 2>/dev/null && wait "$pg_pid"
  [ -n "$beside_pid" ] && kill -INT -- "-$beside_pid" 2>/dev/null && wait "$beside_pid"
  rm -f "$SQLITE_LOG" "$LADDER_LOG"
  [ -n "$containers_pid" ] && kill -INT -- "-$containers_pid" 2>/dev/null && wait "$containers_pid"
  [ -n "$research_pid" ] && kill -INT -- "-$research_pid" 2>/dev/null && wait "$research_pid"
  rm -f "$CONTAINERS_LOG" "$RESEARCH_LOG"
  exit 130
}
trap interrupted INT TERM

start_services
status=0
echo "== ruff"
.venv/bin/ruff check . || status=$?
if pg_up && redis_up; then
  echo "== tests on PostgreSQL + Redis"
  if [ "$NARROWED" -eq 0 ]; then
    start_research
    start_containers
    set -m
    DATABASE_URL=$PG_URL CELERY_BROKER_URL=$REDIS_URL CARDROOM_VAR_DIR=$PWD/var/test-pg CARDROOM_TEST_PART=rest \
      run_pytest $SLOWEST --ignore="$RESEARCH" </dev/null &
    pg_pid=$!
    set +m
    # 1's ladder part and pass 2 start when the container deployment is over
    # (it leaves a core mostly idle for the rest of pass 1: pass 1 alone
    # keeps about one busy) or when 1's rest is, whichever comes first. Each
    # has a Redis database of its own (another's workers must not take its
    # tasks).
    pg_code=
    # (`wait -n -p` is bash 5.1's; an older bash runs the passes in turn.)
    [ "${BASH_VERSINFO[0]}${BASH_VERSINFO[1]}" -ge 51 ] || { pg_code=0; wait "$pg_pid" || pg_code=$?; }
    while [ -z "$pg_code" ] && [ -z "$containers_code" ]; do
      done_pid=
      wait -n -p done_pid "$pg_pid" "$containers_pid"
      code=$?
      if [ "$done_pid" = "$pg_pid" ]; then pg_code=$code
      elif [ "$done_pid" = "$containers_pid" ]; then containers_code=$code
      else echo "scripts/test.sh: lost track of the passes (wait gave '$done_pid')" >&2; exit 1
      fi
    done
    set -m
    ladder_then_sqlite </dev/null &
    beside_pid=$!
    set +m
    if [ -z "$pg_code" ]; then
      pg_code=0
      wait "$pg_pid" || pg_code=$?
    fi
    pg_pid=
    [ "$pg_code" -eq 0 ] || status=$pg_code
    echo "(the PostgreSQL pass's rest ended $(took "$T0") s after the start)"
    beside_code=0
    wait "$beside_pid" || beside_code=$?
    beside_pid=
    echo "== the PostgreSQL pass's ladder part (the ladder tests pass 2 repeats; started beside the rest)"
    cat "$LADDER_LOG"
    echo "== ladder tests on SQLite (the embedded default; any_database tests deselected; started beside the PostgreSQL pass)"
    cat "$SQLITE_LOG"
    [ "$beside_code" -eq 0 ] || status=$beside_code
  else
    DATABASE_URL=$PG_URL CELERY_BROKER_URL=$REDIS_URL CARDROOM_VAR_DIR=$PWD/var/test-pg run_pytest "$@" || status=$?
    start_containers
    echo "== ladder tests on SQLite (the embedded default; any_database tests deselected)"
    sqlite_pass "$@" || status=$?
    echo "(the SQLite pass ended $(took "$T0") s after the start)"
  fi
  finish_research || status=$?
else
  if [ "${CI:-}" = "true" ]; then
    echo "CI needs PostgreSQL ($PG_URL) and Redis ($REDIS_URL); at least one is not reachable" >&2
    exit 1
  fi
  echo "== PostgreSQL or Redis not reachable: running everything on SQLite"
  start_containers
  DATABASE_URL=sqlite:///$PWD/var/test-sqlite/db.sqlite3 CARDROOM_VAR_DIR=$PWD/var/test-sqlite run_pytest "$@" || status=$?
fi
# The container deployment for real (a private Docker daemon, the images, the
# compose stack and its scenario): where a daemon can run; it says SKIPPED and
# why where not (and fails under CI=true, which can run it).
finish_containers || status=$?
rm -f "$RESEARCH_LOG" "$SQLITE_LOG" "$LADDER_LOG"
exit $status
