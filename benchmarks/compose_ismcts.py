"""The search bot on the compose stack's ladders (issue 22): builtin:ismcts
plays ladder matches beside the other bots until at least ``--matches`` of
its matches have finished, and not one of them may be a forfeit of its own.

    make bench-compose-ismcts   # = scripts/containers/run.sh .venv/bin/python benchmarks/compose_ismcts.py
    scripts/containers/run.sh .venv/bin/python benchmarks/compose_ismcts.py --matches 100 --workers 2

Run through scripts/containers/run.sh, which starts the private Docker daemon,
builds the images and tears everything down afterwards. The stack is
docker-compose.yml with the test override (tests/containers/stack.py), as
make test-containers runs it, except that the built-in bots are the
production set (greedy, ismcts and random: the test override keeps the
search bot off its ladders, for its scenario's timings) and the scheduler's
matchmaking fills all four default ladders. The demo's sample bots are
uploaded too (validated by the workers in the sandbox), so that each game
has five bots and its 4-player ladder plays. Every bot is a program in the
bubblewrap sandbox of a worker container, under the ladders' own time limits
(1 s a move, 10 s of overage, 300 s in all): the search bot thinks 150 ms a
decision by the clock, so a loaded machine shows here as forfeits on time.

It prints, every 30 s and at the end: finished ladder matches, those of
ismcts, its forfeits (reason, event, detail), failed matches, and matches a
minute; then ismcts's results per ladder. Exit status 1 when ismcts forfeited
even once or a match failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.containers.stack import Stack, docker_host  # noqa: E402

# Run inside the web container: the demo's sample bots, uploaded by a user of
# their own (the workers validate them, as any upload).
UPLOAD_SAMPLES = """
from pathlib import Path
from django.contrib.auth import get_user_model
from ladder.management.commands.demo import SAMPLES
from ladder.services.bots import create_bot, upload_version
user, _ = get_user_model().objects.get_or_create(username="bench-samples")
for game, name, path, description in SAMPLES:
    bot = create_bot(owner=user, game=game, name=name, description=description)
    upload_version(bot=bot, filename=Path(path).name, data=Path(path).read_bytes())
    print("uploaded", game, name)
"""

ISMCTS_SEATS = """
SELECT m.id, l.name, m.status, p.forfeit_reason, p.forfeit_event, p.forfeit_detail, p.rank, m.num_players
FROM ladder_participant p
JOIN ladder_bot b ON b.id = p.bot_id
JOIN ladder_match m ON m.id = p.match_id
JOIN ladder_ladder l ON l.id = m.ladder_id
WHERE b.name = 'ismcts' AND b.builtin AND m.kind = 'ladder' AND m.status IN ('finished', 'failed')
ORDER BY m.id
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--matches", type=int, default=100, help="finished ladder matches of ismcts to wait for")
    p.add_argument("--workers", type=int, default=2, help="worker containers")
    p.add_argument("--timeout", type=float, default=3600, help="seconds the matches may take")
    return p.parse_args(argv)


def tally(stack: Stack) -> dict:
    seats = stack.sql(ISMCTS_SEATS)
    (finished, failed, first, last), = stack.sql(
        "SELECT count(*) FILTER (WHERE status = 'finished'), count(*) FILTER (WHERE status = 'failed'), "
        "min(enqueued), max(finished) FROM ladder_match WHERE kind = 'ladder'"
    )  # fmt: skip
    others = stack.sql(
        "SELECT b.name, p.forfeit_reason, count(*) FROM ladder_participant p JOIN ladder_bot b ON b.id = p.bot_id "
        "JOIN ladder_match m ON m.id = p.match_id WHERE m.kind = 'ladder' AND p.forfeit_reason <> '' "
        "AND NOT (b.name = 'ismcts' AND b.builtin) GROUP BY 1, 2 ORDER BY 1, 2"
    )  # fmt: skip
    minutes = (last - first).total_seconds() / 60 if first and last else 0.0
    return {
        "ismcts": [s for s in seats if s[2] == "finished"],
        "ismcts_failed": [s for s in seats if s[2] == "failed"],
        "forfeits": [s for s in seats if s[3]],
        "finished": finished,
        "failed": failed,
        "minutes": minutes,
        "others": others,
    }


def line(t: dict) -> str:
    rate = t["finished"] / t["minutes"] if t["minutes"] else 0.0
    ismcts_rate = len(t["ismcts"]) / t["minutes"] if t["minutes"] else 0.0
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{t['finished']} ladder matches finished ({t['failed']} failed), {len(t['ismcts'])} of them with ismcts, "
        f"{len(t['forfeits'])} ismcts forfeits; {rate:.1f} matches/min, {ismcts_rate:.1f} with ismcts/min "
        f"over {t['minutes']:.1f} min; load average {load}"
    )


def main(argv=None) -> int:
    args = parse_args(argv)
    if docker_host() is None:
        print("compose_ismcts: run it through scripts/containers/run.sh (make bench-compose-ismcts)", file=sys.stderr)
        return 2
    stack = Stack(extra_env={"CARDROOM_BUILTIN_BOTS": "greedy,ismcts,random"})
    stack.down()
    t0 = time.monotonic()
    stack.up(workers=args.workers)
    try:
        print(f"stack up with {args.workers} workers in {time.monotonic() - t0:.0f} s", flush=True)
        print(stack.compose("exec", "-T", "web", "python3", "manage.py", "shell", "-c", UPLOAD_SAMPLES).stdout.strip())
        bots = stack.sql(
            "SELECT b.game, string_agg(b.name, ', ' ORDER BY b.name) FROM ladder_bot b GROUP BY 1 ORDER BY 1"
        )  # fmt: skip
        print("bots: " + "; ".join(f"{game}: {names}" for game, names in bots), flush=True)
        deadline = time.monotonic() + args.timeout
        shown = 0.0
        while True:
            t = tally(stack)
            if len(t["ismcts"]) >= args.matches:
                break
            if time.monotonic() > deadline:
                print(f"compose_ismcts: timed out after {args.timeout:.0f} s: {line(t)}", file=sys.stderr)
                print(stack.logs("worker", "scheduler", tail=40), file=sys.stderr)
                return 1
            if time.monotonic() - shown >= 30:
                print(line(t), flush=True)
                shown = time.monotonic()
            time.sleep(2)
        stack.compose("stop", "scheduler")  # no more matches; the tally is of those finished
        print("\n" + line(t))
        print("\n| ladder | ismcts matches | its mean rank | forfeits |\n|---|---|---|---|")
        by_ladder: dict[str, list] = {}
        for seat in t["ismcts"]:
            by_ladder.setdefault(seat[1], []).append(seat)
        for name, seats in sorted(by_ladder.items()):
            mean_rank = sum(s[6] for s in seats) / len(seats)
            print(f"| {name} | {len(seats)} | {mean_rank:.2f} of {seats[0][7]} | {sum(1 for s in seats if s[3])} |")
        for match_id, ladder, _status, reason, event, detail, _rank, _n in t["forfeits"]:
            print(f"ismcts forfeit: match {match_id} ({ladder}): {reason} at event {event}: {detail[:300]}")
        for match_id, ladder, *_ in t["ismcts_failed"]:
            print(f"failed match with ismcts: {match_id} ({ladder})")
        if t["others"]:
            print("other bots' forfeits: " + ", ".join(f"{name} {reason} x{n}" for name, reason, n in t["others"]))
        ok = not t["forfeits"] and not t["failed"]
        print(f"\nismcts forfeits: {len(t['forfeits'])}; failed matches: {t['failed']}: {'OK' if ok else 'FAILED'}")
        return 0 if ok else 1
    finally:
        stack.down()


if __name__ == "__main__":
    sys.exit(main())
