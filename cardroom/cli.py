"""The ``cardroom`` command line (README.md, "The command line").

    cardroom play GAME BOT BOT… [--seed N] [--replay FILE] [--logs DIR] [--option K=V…]
    cardroom verify FILE…
    cardroom luck REPLAY…
    cardroom tournament GAME BOT BOT… --format round-robin|swiss|duplicate [--table-size K]
        [--deals N] [--rounds R] [--seed N] [--out DIR] [--jobs J] [--option K=V…]
    cardroom games
    cardroom bench [--game GAME…] [--players 2,4,6] [--seconds S]
    cardroom login [--server URL] [--username NAME]                                     (cardroom.remote)
    cardroom submit BOT --game GAME --name NAME [--server URL] [--token KEY]            (cardroom.remote)
        [--wait [--wait-timeout SECONDS]] [--new-bot]

``play`` and ``tournament`` also take the time control: ``--startup-ms``,
``--per-move-ms``, ``--overage-ms`` and ``--total-ms``.

Every expected failure (bad bot argument, unknown game or option, wrong player
count, unreadable or invalid replay) is one line on stderr and a non-zero exit
status, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1  # verify: the replay does not check out
EXIT_USAGE = 2  # bad arguments
TAIL_LINES = 10  # of a forfeiting bot's stderr, shown by ``play``


class CliError(Exception):
    """An expected failure: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage dump
        raise CliError(message)


def _parse_options(game_id: str, pairs: Sequence[str]) -> dict[str, Any]:
    from engine import get_game_class

    cls = get_game_class(game_id)
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--option takes KEY=VALUE, not {pair!r}")
        options[key] = cls.parse_option(key, value)
    return options


def cmd_play(args: argparse.Namespace) -> int:
    from cardroom.players import TimeControl
    from cardroom.runner import run_match
    from cardroom.sandbox import local_launcher

    options = _parse_options(args.game, args.option)
    time = TimeControl(
        startup_ms=args.startup_ms, per_move_ms=args.per_move_ms, overage_ms=args.overage_ms, total_ms=args.total_ms
    )
    record = run_match(args.game, args.bots, seed=args.seed, options=options, time=time, launcher=local_launcher)
    if args.replay:
        Path(args.replay).write_text(json.dumps(record.replay, separators=(",", ":")) + "\n", encoding="utf-8")
    log_files: dict[int, Path] = {}
    if args.logs:
        logs = Path(args.logs)
        logs.mkdir(parents=True, exist_ok=True)
        for seat, text in record.logs.items():
            log_files[seat] = logs / f"seat-{seat}.log"
            log_files[seat].write_text(text, encoding="utf-8")
    _print_result(record, args)
    _print_forfeit_logs(record, log_files)
    return EXIT_OK


def _own_lines(log: str, seat: int) -> list[str]:
    """The bot's own lines of its log (without the runner's closing note)."""
    note = f"[cardroom: seat {seat} forfeited at event "
    return [line for line in log.splitlines() if not line.startswith(note)]


def _print_forfeit_logs(record, log_files: dict[int, Path]) -> None:
    """For each seat that forfeited, the last lines of its stderr (what a
    crash's traceback ends with) and where its whole log is: written to a
    temporary file when ``--logs`` was not given."""
    import tempfile

    from cardroom.remote import printable

    for forfeit in record.forfeits:
        lines = _own_lines(record.logs.get(forfeit.seat, ""), forfeit.seat)
        while lines and not lines[-1].strip():
            lines.pop()
        if not lines:
            continue  # a built-in bot, or a bot that wrote nothing
        path = log_files.get(forfeit.seat)
        if path is None:
            fd, name = tempfile.mkstemp(prefix=f"cardroom-seed{record.replay['seed']}-seat{forfeit.seat}-", suffix=".log")
            with open(fd, "w", encoding="utf-8") as out:
                out.write(record.logs[forfeit.seat])
            path = Path(name)
        tail = lines[-TAIL_LINES:]
        print(
            f"seat {forfeit.seat} forfeited ({forfeit.reason}); the last {len(tail)} of the {len(lines)} lines of its "
            f"stderr (the whole log is {path}):",
            file=sys.stderr,
        )
        for line in tail:
            print(f"  | {printable(line[:500], one_line=True)}", file=sys.stderr)


def _print_result(record, args) -> None:
    from cardroom.remote import printable

    replay = record.replay
    forfeits = {f.seat: f for f in record.forfeits}
    print(f"{replay['game']}, {replay['num_players']} players, seed {replay['seed']}, {len(replay['events'])} events")
    width = max(len(p["bot"]) for p in record.players)
    print(f"{'seat':>4}  {'bot':<{width}}  {'score':>6}  {'rank':>4}  forfeit")
    for seat, player in enumerate(record.players):
        forfeit = forfeits.get(seat)
        note = f"{forfeit.reason} at event {forfeit.event}: {printable(forfeit.detail, one_line=True)}" if forfeit else ""
        print(f"{seat:>4}  {player['bot']:<{width}}  {record.result.scores[seat]:>6}  {record.result.ranks[seat]:>4}  {note}")
    if args.replay:
        print(f"replay written to {args.replay}")


def _each_replay(paths: list[str], report: Callable[[str, dict], None]) -> int:
    """``report(path, document)`` for each replay in order; a replay that
    cannot be read or does not re-play is one line on stderr, and the exit
    status is then 1 (the others are still reported)."""
    from engine.replay import ReplayError, load

    status = EXIT_OK
    for path in paths:
        try:
            report(path, load(path))
        except ReplayError as exc:
            print(f"{path}: INVALID: {exc}", file=sys.stderr)
            status = EXIT_FAILED
    return status


def cmd_verify(args: argparse.Namespace) -> int:
    from engine.replay import verify

    def report(path: str, doc: dict) -> None:
        checked = verify(doc)
        forfeits = ", ".join(f"seat {f['seat']} ({f['reason']})" for f in checked.forfeits) or "none"
        print(
            f"{path}: OK: {checked.game}, {checked.num_players} players, {checked.events} events, "
            f"scores {checked.result.scores}, ranks {checked.result.ranks}, forfeits: {forfeits}"
        )

    return _each_replay(args.files, report)


def cmd_luck(args: argparse.Namespace) -> int:
    """One JSON line per replay, in order (docs/luck.md)."""
    from cardroom.luck import luck_of

    return _each_replay(args.files, lambda path, doc: print(json.dumps(luck_of(doc).as_dict(path)), flush=True))


def cmd_tournament(args: argparse.Namespace) -> int:
    import secrets

    from cardroom.players import TimeControl
    from cardroom.runner import check_bot_spec
    from cardroom.sandbox import local_launcher
    from cardroom.tournament import local
    from cardroom.tournament.schedule import EventSpec, ScheduleError

    options = _parse_options(args.game, args.option)
    if len(args.bots) < 2:
        raise CliError("a tournament needs at least 2 bots")
    table_size = args.table_size
    if table_size is None:
        if not 2 <= len(args.bots) <= 6:
            raise CliError(f"--table-size is needed with {len(args.bots)} bots (it defaults to the number of bots when that is 2-6)")
        table_size = len(args.bots)
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs must be at least 1, not {args.jobs}")
    for bot in dict.fromkeys(args.bots):
        check_bot_spec(bot, args.game)
    # 62 bits: too many for a bot to search for the one that deals its cards.
    seed = secrets.randbelow(2**62) if args.seed is None else args.seed
    try:
        spec = EventSpec(
            game=args.game,
            format=args.format,
            field_size=len(args.bots),
            table_size=table_size,
            deals=args.deals,
            rounds=args.rounds,
            seed=seed,
            options=options,
        )
    except ScheduleError as exc:
        raise CliError(str(exc)) from None
    time = TimeControl(
        startup_ms=args.startup_ms, per_move_ms=args.per_move_ms, overage_ms=args.overage_ms, total_ms=args.total_ms
    )
    out = Path(args.out or f"tournament-{args.game}-{args.format}-{seed}")
    jobs = args.jobs or local.default_jobs()
    entries = local.entry_names(args.bots)
    # Probed once here, before the workers fork, so that a fallback warns once.
    launcher = local_launcher() if any(not bot.startswith("builtin:") for bot in args.bots) else None
    result = local.run_event(
        spec, entries, out, jobs=jobs, time=time, progress=local.ProgressBar(), launcher=launcher,
        luck=args.luck, decided_by=args.decided_by,
    )  # fmt: skip
    _print_standings(result, out)
    return EXIT_OK if result.played == result.total else EXIT_FAILED


def _print_standings(result, out: Path) -> None:
    from cardroom.tournament.standings import LEGEND

    spec, doc = result.spec, result.standings
    event = result.document["event"]
    print(
        f"{spec.game} {spec.format} ({event['pairing']}), {spec.field_size} entries at tables of {spec.table_size}, "
        f"{spec.deals} deal(s), {event['rounds']} round(s), seed {spec.seed}: {result.played} matches"
    )
    width = max(4, *(len(r["name"]) for r in doc["standings"]))
    method = doc["standings"][0]["ci95"]["method"]
    print(f"{'#':>3}  {'entry':<{width}}  {'games':>5}  {'points':>7}  {'per game':>8}  {'95% CI (' + method + ')':<26}  {'margin':>7}  {'h2h':>4}")
    for r in doc["standings"]:
        ci = r["ci95"]
        interval = f"[{ci['low']:.3f}, {ci['high']:.3f}]" if ci["low"] is not None else "(too few games)"
        print(
            f"{r['place']:>3}  {r['name']:<{width}}  {r['matches']:>5}  {r['points']:>7.2f}  {r['points_per_match']:>8.3f}  "
            f"{interval:<26}  {r['score_margin']:>7.2f}  {r['head_to_head']:>4}"
        )
    if "decided_by" in doc:
        print(f"luck-adjusted points per game ({', '.join(doc['value_functions']) or 'no luck known'}); decided by {doc['decided_by']}:")
        for r in doc["standings"]:
            ci = r["adjusted"]["ci95"]
            interval = f"[{ci['low']:.3f}, {ci['high']:.3f}]" if ci["low"] is not None else "(too few games)"
            print(f"  {r['name']:<{width}}  {r['adjusted']['points_per_match']:>8.3f}  {interval}")
    for line in LEGEND:
        print(f"  {line}")
    diffs = doc.get("differences") or []
    if diffs and len(doc["standings"]) <= 12:
        names = {r["entry"]: r["name"] for r in doc["standings"]}
        print(f"differences in points per game, 95% CI ({diffs[0]['ci95']['method']}):")
        for d in diffs:
            ci = d["ci95"]
            interval = f"[{ci['low']:+.3f}, {ci['high']:+.3f}]" if ci["low"] is not None else "(too few games)"
            mark = "  *" if d["significant"] else ""
            print(f"  {names[d['a']]} - {names[d['b']]}: {ci['estimate']:+.3f} {interval}{mark}")
    print(f"replays in {out / 'replays'}, standings in {out / 'standings.json'}")


def cmd_games(args: argparse.Namespace) -> int:
    from engine import game_ids, get_game_class

    for game_id in game_ids():
        cls = get_game_class(game_id)
        opts = ", ".join(f"{k}={json.dumps(d)}" for k, (_t, d) in cls.option_specs.items())
        print(f"{game_id:<10} {cls.name}, {cls.min_players}-{cls.max_players} players; options: {opts or 'none'}")
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from cardroom.bench import run_bench

    counts = [int(x) for x in args.players.split(",")]
    games = args.game or None
    run_bench(games=games, player_counts=counts, seconds=args.seconds)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cardroom", description="cardroom: bot matches for Allegory and Allegra")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    play = sub.add_parser("play", help="play one match and print the result")
    play.add_argument("game", metavar="GAME", help="allegory or allegra")
    play.add_argument("bots", metavar="BOT", nargs="+", help="a bot file, folder, .zip/.tar.gz, or builtin:NAME")
    play.add_argument("--seed", type=int, help="the match seed (random if left out)")
    play.add_argument("--replay", metavar="FILE", help="write the replay (format v1) to FILE")
    play.add_argument("--logs", metavar="DIR", help="write each seat's stderr to DIR/seat-<n>.log")
    play.add_argument("--option", metavar="K=V", action="append", default=[], help="a game option (repeatable)")
    play.add_argument("--startup-ms", type=int, default=10_000, help="time to answer 'start' (default 10000)")
    play.add_argument("--per-move-ms", type=int, default=1_000, help="time per decision (default 1000)")
    play.add_argument("--overage-ms", type=int, default=10_000, help="overage bank per match (default 10000)")
    play.add_argument("--total-ms", type=int, default=300_000, help="total thinking time (default 300000)")
    play.set_defaults(func=cmd_play)

    ver = sub.add_parser("verify", help="re-play replays through the engine and check their results")
    ver.add_argument("files", metavar="FILE", nargs="+")
    ver.set_defaults(func=cmd_verify)

    luck = sub.add_parser("luck", help="the luck each seat had in replays, and its payoff adjusted for it (JSON lines)")
    luck.add_argument("files", metavar="REPLAY", nargs="+")
    luck.set_defaults(func=cmd_luck)

    tour = sub.add_parser("tournament", help="play a whole event locally (round-robin, Swiss or duplicate)")
    tour.add_argument("game", metavar="GAME", help="allegory or allegra")
    tour.add_argument("bots", metavar="BOT", nargs="+", help="the field: bot files, folders, .zip/.tar.gz, or builtin:NAME")
    tour.add_argument("--format", required=True, choices=["round-robin", "swiss", "duplicate"])
    tour.add_argument("--table-size", type=int, help="players per match (default: the number of BOTs, when 2-6)")
    tour.add_argument("--deals", type=int, default=1, help="matches per table (duplicate: deals, each in every seat rotation)")
    tour.add_argument("--rounds", type=int, help="Swiss rounds; for round-robin, asks for a balanced schedule of R rounds")
    tour.add_argument("--seed", type=int, help="the event seed (random if left out; printed)")
    tour.add_argument("--out", metavar="DIR", help="where replays/ and standings.json go (default tournament-GAME-FORMAT-SEED)")
    tour.add_argument("--jobs", type=int, help="matches played at once, one process each (default: the number of cores)")
    tour.add_argument("--option", metavar="K=V", action="append", default=[], help="a game option (repeatable)")
    tour.add_argument("--startup-ms", type=int, default=10_000, help="time to answer 'start' (default 10000)")
    tour.add_argument("--per-move-ms", type=int, default=1_000, help="time per decision (default 1000)")
    tour.add_argument("--overage-ms", type=int, default=10_000, help="overage bank per match (default 10000)")
    tour.add_argument("--total-ms", type=int, default=300_000, help="total thinking time (default 300000)")
    tour.add_argument("--luck", action="store_true", help="also each match's luck, and the standings with it taken out (docs/luck.md)")
    tour.add_argument(
        "--decided-by", choices=["plain", "adjusted"], default="plain",
        help="what orders the table first: plain or luck-adjusted points per game (adjusted implies --luck)",
    )  # fmt: skip
    tour.set_defaults(func=cmd_tournament)

    games = sub.add_parser("games", help="list the games and their options")
    games.set_defaults(func=cmd_games)

    bench = sub.add_parser("bench", help="measure engine speed, sampled-world playouts and ismcts iterations per second")
    bench.add_argument("--game", action="append", help="only this game (repeatable)")
    bench.add_argument("--players", default="2,4,6", help="player counts (default 2,4,6)")
    bench.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    bench.set_defaults(func=cmd_bench)

    from cardroom import remote  # login and submit: against a server's REST API

    remote.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from cardroom.runner import BotSpecError
    from cardroom.sandbox import SandboxUnavailable
    from engine.core import EngineError

    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (CliError, BotSpecError, EngineError, SandboxUnavailable) as exc:
        print(f"cardroom: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("cardroom: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # e.g. the replay or log path cannot be written
        print(f"cardroom: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
