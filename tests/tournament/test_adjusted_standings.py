"""Standings with luck-adjusted points beside the plain ones (issue 37):
the old columns untouched, the adjusted ones through the same interval
code, and the organizer's choice of which decides the order."""

from __future__ import annotations

import pytest

from cardroom.tournament.standings import Outcome, compute

# Three entries: plainly A (3/4), B (2/4), C (1/4); adjusted B (0.6875), A (0.5125), C (0.3).
PLAIN = [
    Outcome(0, (0, 1), (1, 2), (10, 4), deal=0),
    Outcome(1, (1, 0), (2, 1), (3, 9), deal=0),
    Outcome(2, (0, 2), (1, 2), (8, 2), deal=1),
    Outcome(3, (1, 2), (1, 2), (7, 5), deal=1),
    Outcome(4, (2, 1), (2, 1), (1, 6), deal=2),
    Outcome(5, (2, 0), (1, 2), (9, 3), deal=2),
]
ADJUSTED = {0: (0.4, 0.6), 1: (0.45, 0.55), 2: (0.7, 0.3), 3: (0.9, 0.1), 4: (0.2, 0.8), 5: (0.6, 0.4)}


def with_luck(outcomes):
    return [
        Outcome(
            o.number,
            o.seats,
            o.ranks,
            o.scores,
            deal=o.deal,
            adjusted=ADJUSTED[o.number],
            value_function="allegory-net@1",
        )
        for o in outcomes
    ]


def test_without_luck_the_document_is_as_before():
    doc = compute("allegory", ["A", "B", "C"], PLAIN)
    assert "adjusted" not in doc["standings"][0]
    assert not {"decided_by", "value_functions", "adjusted_differences"} & set(doc)


def test_the_adjusted_columns_sit_beside_the_plain_ones_which_do_not_change():
    plain = compute("allegory", ["A", "B", "C"], PLAIN)
    doc = compute("allegory", ["A", "B", "C"], with_luck(PLAIN))
    for before, after in zip(plain["standings"], doc["standings"]):
        assert {k: v for k, v in after.items() if k != "adjusted"} == before
    assert doc["differences"] == plain["differences"] and doc["crosstable"] == plain["crosstable"]
    assert doc["decided_by"] == "plain" and doc["value_functions"] == ["allegory-net@1"]
    rows = {r["name"]: r for r in doc["standings"]}
    # B: 0.6, 0.45, 0.9, 0.8 -> 0.6875 a match, over 4 matches, every one's luck known
    assert rows["B"]["adjusted"]["points_per_match"] == pytest.approx(0.6875)
    assert rows["B"]["adjusted"]["matches_adjusted"] == 4
    assert rows["B"]["adjusted"]["ci95"]["method"] == "t-per-match" and rows["B"]["adjusted"]["ci95"]["n"] == 4
    assert [(d["a"], d["b"]) for d in doc["adjusted_differences"]] == [(d["a"], d["b"]) for d in doc["differences"]]
    assert all(d["ci95"]["method"] == "welch" for d in doc["adjusted_differences"])


def test_the_organizer_chooses_what_decides():
    plain = compute("allegory", ["A", "B", "C"], with_luck(PLAIN))
    adjusted = compute("allegory", ["A", "B", "C"], with_luck(PLAIN), decided_by="adjusted")
    by_plain = [r["name"] for r in plain["standings"]]
    by_adjusted = [r["name"] for r in adjusted["standings"]]
    assert by_plain == ["A", "B", "C"] and by_adjusted == ["B", "A", "C"]
    assert [r["adjusted"]["points_per_match"] for r in adjusted["standings"]] == sorted(
        (r["adjusted"]["points_per_match"] for r in plain["standings"]), reverse=True
    )
    assert [r["place"] for r in adjusted["standings"]] == [1, 2, 3]
    with pytest.raises(ValueError, match="decided_by"):
        compute("allegory", ["A", "B", "C"], PLAIN, decided_by="luck")


def test_a_match_of_unknown_luck_counts_its_plain_points_and_duplicate_pairs_by_deal():
    outcomes = with_luck(PLAIN)
    outcomes[0] = PLAIN[0]  # luck not known: A 1, B 0 in place of 0.4 and 0.6
    doc = compute("allegory", ["A", "B", "C"], outcomes, duplicate=True)
    rows = {r["name"]: r for r in doc["standings"]}
    assert rows["A"]["adjusted"]["matches_adjusted"] == 3 and rows["A"]["matches"] == 4
    # A's deals: 0 -> (1 + 0.55) / 2, 1 -> 0.7, 2 -> 0.4; paired by deal
    assert rows["A"]["adjusted"]["points_per_match"] == pytest.approx((1 + 0.55 + 0.7 + 0.4) / 4)
    assert rows["A"]["adjusted"]["ci95"]["method"] == "t-per-deal" and rows["A"]["adjusted"]["ci95"]["n"] == 3
    assert all(d["ci95"]["method"] == "paired-by-deal" for d in doc["adjusted_differences"])


def test_cardroom_tournament_decided_by_adjusted_writes_each_match_s_luck(tmp_path):
    import json

    from tests.tournament.test_local import run_cli

    out = tmp_path / "ev"
    proc = run_cli("allegory", "builtin:greedy", "builtin:random", "--format", "duplicate", "--deals", "3",
                   "--seed", "5", "--jobs", "1", "--decided-by", "adjusted", "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "luck-adjusted points per game (allegory-net@1); decided by adjusted:" in proc.stdout
    doc = json.loads((out / "standings.json").read_text())
    assert doc["decided_by"] == "adjusted" and doc["value_functions"] == ["allegory-net@1"]
    assert all(sum(m["luck"]["luck"]) == pytest.approx(0, abs=1e-9) for m in doc["matches"])
    rows = doc["standings"]
    assert rows[0]["adjusted"]["points_per_match"] >= rows[1]["adjusted"]["points_per_match"]
    assert all(r["adjusted"]["matches_adjusted"] == 6 for r in rows)
    plain = run_cli("allegory", "builtin:greedy", "builtin:random", "--format", "duplicate", "--deals", "1",
                    "--seed", "5", "--jobs", "1", "--out", str(tmp_path / "plain"))  # fmt: skip
    assert plain.returncode == 0 and "luck-adjusted" not in plain.stdout
    plain_doc = json.loads((tmp_path / "plain" / "standings.json").read_text())
    assert "decided_by" not in plain_doc and "luck" not in plain_doc["matches"][0]  # as it always was
    bad = run_cli("allegory", "builtin:greedy", "builtin:random", "--format", "duplicate", "--decided-by", "luck")
    assert bad.returncode == 2 and "invalid choice: 'luck'" in bad.stderr
