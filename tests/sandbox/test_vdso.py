"""The worker's loads of the host's vDSO between the turns of different
bots (decision 273): what it loads, where, and when. Whether that closes
the Flush+Reload across it is the attack's to say
(test_covert_channels.test_the_vdso_carries_nothing_between_seats)."""

from __future__ import annotations

import ctypes
import os

import pytest

from cardroom.runner import run_match
from cardroom.sandbox.vdso import PAGE, VdsoWarmer, backed, shared_pages, shared_ranges

from .conftest import REPO

LIBC = ctypes.CDLL(None, use_errno=True)


def test_it_loads_every_page_of_the_shared_mappings_a_read_reaches():
    with open("/proc/self/maps") as maps:
        pages = shared_pages(maps)
    vdso = [page for page in pages if page in range(*mapped("[vdso]"))]
    assert len(vdso) >= 1
    reachable = backed(len(pages))
    assert all(reachable[pages.index(page)] for page in vdso)  # code: always there
    warmer = VdsoWarmer.of_this_process()
    loaded = {page for start, length in warmer.ranges for page in range(start, start + length, PAGE)}
    assert loaded == {page for page, ok in zip(pages, reachable, strict=True) if ok}
    warmer.load_here()  # and reading them all is safe


def mapped(name: str) -> tuple[int, int]:
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith(name):
                low, high = (int(x, 16) for x in line.split()[0].split("-"))
                return low, high
    pytest.skip(f"the kernel maps no {name} here")


def test_neighbouring_pages_are_read_as_one_range_and_unbacked_ones_skipped():
    pages = [0x1000, 0x2000, 0x3000, 0x5000, 0x6000]
    assert shared_ranges(pages, [True, True, False, True, True]) == [(0x1000, 2 * PAGE), (0x5000, 2 * PAGE)]


def test_a_kernel_without_a_vdso_leaves_nothing_to_load():
    assert shared_pages(["7f0000000000-7f0000001000 r--p 00000000 00:00 0  [heap]"]) == []
    with pytest.raises(ValueError):
        VdsoWarmer([])


class WhereLoaded(VdsoWarmer):
    """Loads as the worker does, and notes the CPU each load ran on."""

    def __init__(self, ranges):
        super().__init__(ranges)
        self.cpus: list[int] = []

    def load_here(self) -> None:
        super().load_here()
        self.cpus.append(LIBC.sched_getcpu())


def test_the_lines_are_loaded_on_every_cpu_and_the_thread_goes_back():
    warmer = WhereLoaded(VdsoWarmer.of_this_process().ranges)
    allowed = os.sched_getaffinity(0)
    warmer.warm()
    assert sorted(warmer.cpus) == sorted(allowed)
    assert os.sched_getaffinity(0) == allowed


def test_a_thread_held_to_one_cpu_loads_there_and_stays():
    warmer = WhereLoaded(VdsoWarmer.of_this_process().ranges)
    allowed = os.sched_getaffinity(0)
    one = min(allowed)
    os.sched_setaffinity(0, {one})
    try:
        warmer.warm()
        assert warmer.cpus == [one] and os.sched_getaffinity(0) == {one}
    finally:
        os.sched_setaffinity(0, allowed)


def test_it_loads_between_different_bots_only():
    warmer = VdsoWarmer(VdsoWarmer.of_this_process().ranges)
    first, second = warmer.new_token(), warmer.new_token()
    assert first != second
    for token in (first, first, second, second, second, first):
        warmer.before_thaw(token)
    assert warmer.warmed == 3  # the first thaw, then each change of bot


def test_each_bot_of_the_sandbox_thaws_after_the_loads(bwrap_launcher):
    assert bwrap_launcher.vdso is not None
    before = bwrap_launcher.vdso.warmed
    bot = REPO / "bots" / "random_bot.py"
    record = run_match("allegra", [str(bot), str(bot)], seed=3, launcher=bwrap_launcher)
    assert not record.forfeits, record.logs
    moves = [event["by"] for event in record.replay["events"] if event["by"] in (0, 1)]
    switches = 1 + sum(1 for a, b in zip(moves, moves[1:], strict=False) if a != b)
    # each change of mover, each bot's first move and its thaw to read 'end'
    assert switches <= bwrap_launcher.vdso.warmed - before <= switches + 4


def test_the_loads_come_before_the_thaw_once_a_change_of_bot(bwrap_launcher, tmp_path):
    """ProtocolPlayer.act calls prepare_resume before the bot's clock
    starts; resume then finds the work done, and does it itself where
    prepare_resume was not called."""
    from cardroom.launch import BotLimits

    warmer = bwrap_launcher.vdso
    (tmp_path / "bot.py").write_text("import sys\nsys.stdin.read()\n")  # waits, frozen or not
    procs = [bwrap_launcher.spawn(tmp_path, ["/usr/bin/python3", "bot.py"], BotLimits(), seat) for seat in (0, 1)]
    try:
        first, second = procs
        before = warmer.warmed
        first.prepare_resume()
        first.resume()
        assert warmer.warmed == before + 1
        first.pause()
        second.resume()  # no prepare_resume: resume does it
        assert warmer.warmed == before + 2
        second.pause()
    finally:
        for proc in procs:
            proc.kill()
