"""Hidden information stays in its seat (issue 35): each test is the attack,
a sending and a receiving bot in real matches through the real sandbox,
and asserts that what the receiver decodes is no better than chance.

The statistics: each decoded symbol is right by chance alone with
probability 2**-B (B its bits; 1/2 for each bit of the page cache, whose
message the receiver never sees). A one-sided exact binomial test at
ALPHA = 0.001 says whether the number right is better than chance. The
trials are chosen so that a channel right three times in four (far below
what any of these carried before issue 35: 90-100%) is caught with a power
of at least 0.99: 128 bits for the page cache (chance: at most 81 right),
at least 90 symbols of 4 bits for the counters (at most 14 right), at
least 60 of 2 bits for diskstats (at most 26; decision 180). A test whose
receiver decoded fewer than that fails as unable to tell, unless the
sandbox refused it the channel altogether (then nothing is decoded, and
the sender or receiver logged why). What a closed channel leaves is a
decoder that says the same every time: the counters' symbols are a fixed
draw and the page cache's messages have exactly half their bits 1, so
such a decoder never fails a test by the luck of the draw.

The files the page-cache and diskstats senders read are drawn afresh each
run (``files_seed``, in the failure message) from every file the bot can
see: files read by an earlier run are cached already."""

from __future__ import annotations

import re
import secrets

import pytest

from cardroom.runner import TimeControl, run_match

from .channels import (
    RANK,
    cache_across_matches,
    cache_between_seats,
    covert_match,
    fewest_beating_chance,
    hostile_bot,
    p_at_least,
)
from .conftest import assert_host_clean

pytestmark = pytest.mark.sandbox

ALPHA = 0.001
TIME = TimeControl(startup_ms=20_000, per_move_ms=2_000, overage_ms=5_000, total_ms=120_000, end_grace_ms=1_000)
# the page cache's oracles: ru_inblock, /proc/self/io read_bytes, the access time, a read's duration
# (against a second read, and ranked among the symbol's files: decision 268)
ORACLES = ("rusage", "io", "atime", "time", RANK)


@pytest.fixture
def clean_host(recording):
    yield recording
    assert_host_clean(recording.procs)


def assert_at_chance(crossing, files_seed: int, oracles: tuple[str, ...] = ORACLES) -> None:
    # getrusage cannot be taken from a process: the receiver always decodes by it
    assert crossing.decoded.get("rusage", 0) >= 128, (crossing.summary(), crossing.receiver_log[-2000:])
    for oracle in oracles:
        if oracle in crossing.decoded:
            right, trials = crossing.right[oracle], crossing.decoded[oracle]
            assert crossing.p_value(oracle) > ALPHA, (
                f"{oracle}: {right} of {trials} bits crossed (chance: at most "
                f"{fewest_beating_chance(trials, 0.5, ALPHA) - 1}); files_seed {files_seed}; {crossing.summary()}"
            )


def test_the_page_cache_carries_nothing_to_the_next_rotation(clean_host, tmp_path):
    """The duplicate case: in rotation k a writer reads the visible files
    whose bits are 1 (128 bits: the Moral it saw, say); in rotation k+1 a
    reader of the same deal reads every one of them and asks each oracle
    whether it was cached."""
    files_seed = secrets.randbits(32)
    crossing = cache_across_matches(clean_host, tmp_path, TIME, files_seed, bits=128)
    assert crossing.sent == 128, crossing.sender_log[-2000:]
    assert_at_chance(crossing, files_seed)


def test_the_page_cache_carries_nothing_between_seats(clean_host, tmp_path):
    """A sender seat reads 8 bits' worth of files in each of its turns of
    the game's first 48; the receiver seat probes them at its next move, by
    every counter and by a read's duration. The duration crossed while the
    seats shared the image's pages (the CPU's caches remembered the
    sender's reads: 1516 of 2120 bits by rank in 6 matches, load 8.7);
    each seat reads its own copy now (decision 268)."""
    files_seed = secrets.randbits(32)
    crossing = cache_between_seats(clean_host, tmp_path, TIME, files_seed, bits=8, symbols=48)
    assert_at_chance(crossing, files_seed)


def test_the_seats_of_a_match_share_no_file_page(clean_host, tmp_path):
    """One package in both seats: the interpreter, the standard library,
    the SDK, the bot's own file and the files bound over /proc's are other
    files (another device or inode: other pages) in each seat, so nothing
    one seat reads is in the CPU's caches for the other (decision 268)."""
    bot = hostile_bot(tmp_path / "identity", "file_identity.py", {})
    record = run_match("allegra", [str(bot), str(bot)], seed=3, time=TIME, launcher=clean_host)
    seen = [dict(re.findall(r"^file (\S+) (\d+ \d+)$", record.logs[seat], re.M)) for seat in (0, 1)]
    assert len(seen[0]) == 6 and seen[0].keys() == seen[1].keys(), record.logs
    shared = [path for path in seen[0] if seen[0][path] == seen[1][path]]
    assert not shared, f"both seats read the same file at {shared}"


def assert_counter_at_chance(crossing, bits: int, trials: int, refused: str) -> None:
    if crossing.decoded == 0:  # the channel is gone: the sandbox refused it outright
        assert refused in crossing.sender_log + crossing.receiver_log, (crossing.sender_log[-1000:], crossing.receiver_log[-1000:])
        return
    assert crossing.decoded >= trials, f"only {crossing.decoded} symbols decoded: too few to tell"
    chance = 2.0**-bits
    assert p_at_least(crossing.correct, crossing.decoded, chance) > ALPHA, (
        f"{crossing.correct} of {crossing.decoded} {bits}-bit symbols crossed "
        f"(chance: at most {fewest_beating_chance(crossing.decoded, chance, ALPHA) - 1})"
    )


def test_diskstats_carries_nothing_between_seats(clean_host, tmp_path):
    """The sender reads 0-3 small files nobody read lately at each move (one
    read request each); the receiver reads the host's reads completed in
    /proc/diskstats at its own."""
    files_seed = secrets.randbits(32)
    crossing = covert_match(clean_host, tmp_path, "diskstats", 2, TIME, files_seed=files_seed)
    assert_counter_at_chance(crossing, 2, 60, "diskstats unreadable")


@pytest.mark.parametrize(
    ("channel", "scale", "file"),
    [("shmem", 64, "/proc/meminfo"), ("threads", 1, "/proc/loadavg"), ("forks", 1, "/proc/stat"), ("sysinfo", 1, "sysinfo(2)")],
)
def test_host_wide_counters_carry_nothing_between_seats(clean_host, tmp_path, channel, scale, file):
    """meminfo (Shmem: pages the sender keeps in its /tmp), loadavg (the
    host's task count: processes it keeps asleep), stat (forks since boot:
    children it forks and reaps) and the sysinfo call (the same task
    count, without /proc), 4 bits a move each, 16 levels."""
    crossing = covert_match(clean_host, tmp_path, channel, 4, TIME, scale=scale)
    assert_counter_at_chance(crossing, 4, 90, f"{channel} unreadable")


@pytest.mark.parametrize("channel", ["pipeino", "memfdino"])
def test_inode_numbers_carry_nothing_between_seats(clean_host, tmp_path, channel):
    """Both seats move to CPU 0 (the kernel hands each counter out to each
    CPU in batches of 1024); the sender makes and closes pipes (or memfds)
    at its moves, the receiver makes one at its own and reads its inode
    number (fstat). 4 bits a move, 16 levels. The start-up gate refuses
    both after ``ready`` (decision 237): 7.3-7.9 bits a move crossed
    before."""
    crossing = covert_match(clean_host, tmp_path, channel, 4, TIME)
    assert_counter_at_chance(crossing, 4, 90, f"{channel} unreadable")


@pytest.mark.parametrize(("channel", "calls"), [("vdso", 1), ("vdso", 4), ("vdsoflush", 1)])
def test_the_vdso_carries_nothing_between_seats(clean_host, tmp_path, channel, calls):
    """Flush+Reload on the one page every seat still shares: the receiver
    flushes the vDSO's lines at the end of its move, the sender calls
    time() CALLS times for a 1 at its own, the receiver times a load of the
    line time() runs at its next (1 bit a move; the line and threshold it
    finds by calling time() itself before it is ready). In
    benchmarks/covert_channels.py --cold-vdso, 10 matches each, load 6-6.5:
    942 of 1035 bits right with one call, 914 with four, as before decision
    273; now the worker flushes every line of it and loads each again on
    every CPU before a bot thaws after another: 517 and 507 of 1035.
    vdsoflush the other way round: the receiver calls time() at the end of
    its move, the sender flushes the vDSO for a 1: 967 of 1035 before, 516
    after."""
    crossing = covert_match(clean_host, tmp_path, channel, 1, TIME, scale=calls)
    assert_counter_at_chance(crossing, 1, 60, "vdso refused")


@pytest.mark.parametrize("channel", ["procino", "zeroino"])
def test_inode_numbers_read_without_new_files_carry_nothing(clean_host, tmp_path, channel):
    """The same counters with nothing the start-up gate refuses: the
    sender opens a descriptor and looks up /proc/self/fd/N (a new procfs
    inode), or maps /dev/zero shared, SYMBOL times at its move; the
    receiver does it once and reads the number (lstat, /proc/self/maps).
    Once a bot is ready its /proc is five static texts and its /dev has no
    zero (decision 267): 111 of 111 8-bit symbols crossed before."""
    crossing = covert_match(clean_host, tmp_path, channel, 4, TIME)
    assert_counter_at_chance(crossing, 4, 90, f"{channel} unreadable")
