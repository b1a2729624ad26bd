"""``allegory-net@2`` (decision 303): ``allegory-net@1`` scaled at 4
players. Its luck is the record's times the factor, seat for seat, at 4
players, and the record's own elsewhere; a match's luck still adds up to
0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cardroom.luck.allegory import AllegoryAdapter, NetAllegoryValue, ScaledNetAllegoryValue
from cardroom.luck.estimator import luck_with

REPLAYS = Path(__file__).resolve().parents[1] / "data" / "replays"


def _luck(doc, value):
    return [seat.luck for seat in luck_with(doc, lambda _g: AllegoryAdapter(value)).seats]


@pytest.mark.parametrize("name", ["allegory-2p.json", "allegory-3p-unique-morals.json", "allegory-4p.json"])
def test_the_luck_is_the_record_s_times_the_factor_of_its_table(name):
    doc = json.loads((REPLAYS / name).read_text(encoding="utf-8"))
    record, scaled = _luck(doc, NetAllegoryValue()), _luck(doc, ScaledNetAllegoryValue())
    factor = ScaledNetAllegoryValue.SCALES.get(doc["num_players"], 1.0)
    assert any(abs(x) > 1e-3 for x in record)  # (a replay with luck to scale)
    assert scaled == pytest.approx([factor * x for x in record], abs=1e-12)
    assert sum(scaled) == pytest.approx(0, abs=1e-9)


def test_it_scales_at_4_players_only_and_by_less_than_1():
    assert set(ScaledNetAllegoryValue.SCALES) == {4}
    assert 0 < ScaledNetAllegoryValue.SCALES[4] < 1
    assert ScaledNetAllegoryValue().label == "allegory-net@2"
