"""What differs by the kind of a match is its policy's
(ladder.services.match_kinds): every kind has one, and no other module of
ladder/ branches on a match's kind (issue 39). A query may still select
matches of a kind; a comparison with a kind is a branch."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.conf import settings

from ladder.models import Match
from ladder.services import enqueue, match_kinds

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / "ladder" / "services" / "match_kinds.py"


def _names_a_kind(node: ast.AST) -> bool:
    """``Match.Kind.X``, ``Match.Kind``, ``match.kind``, ``row["kind"]``
    (a bare name ``kind`` is too common a word to count: a replay event's
    kind, an error's)."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("kind", "Kind") or _names_a_kind(node.value)
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_kind(e) for e in node.elts)
    return False


def kind_branches(source: str, filename: str = "<source>") -> list[int]:
    """Lines that compare something with a match's kind (==, !=, in, is,
    a ``match`` statement on it)."""
    lines = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare) and any(_names_a_kind(side) for side in (node.left, *node.comparators)):
            lines.append(node.lineno)
        elif isinstance(node, ast.Match) and _names_a_kind(node.subject):
            lines.append(node.lineno)
    return lines


def test_no_module_of_ladder_branches_on_a_match_kind_outside_the_policies():
    found = []
    for path in sorted((ROOT / "ladder").rglob("*.py")):
        if path == POLICIES or "migrations" in path.parts:
            continue
        found += [f"{path.relative_to(ROOT)}:{line}" for line in kind_branches(path.read_text(), str(path))]
    assert found == [], "ask the match's policy (ladder.services.match_kinds.policy_for) instead"


@pytest.mark.parametrize(
    "source",
    [
        "if match.kind == Match.Kind.CASUAL: pass",
        "x = 1 if row['kind'] != Match.Kind.LADDER else 2",
        "ok = k in (Match.Kind.LADDER, Match.Kind.TOURNAMENT)",
        "match m.kind:\n    case 'ladder': pass",
    ],
)
def test_the_check_sees_a_planted_branch(source):
    assert kind_branches(source) == [1]


def test_the_check_leaves_queries_alone():
    assert kind_branches("qs = Match.objects.filter(kind=Match.Kind.LADDER).exclude(kind__in=kinds(has_person_seat=True))") == []


def test_every_kind_has_a_policy():
    assert set(match_kinds.POLICIES) == set(Match.Kind.values)
    assert all(policy.kind == kind for kind, policy in match_kinds.POLICIES.items())


def test_a_casual_match_gets_one_attempt_and_its_person_s_clock_on_its_ceiling():
    casual, ladder = match_kinds.policy_for(Match.Kind.CASUAL), match_kinds.policy_for(Match.Kind.LADDER)
    assert casual.max_attempts() == 1 < settings.CARDROOM_MATCH_MAX_ATTEMPTS == ladder.max_attempts()
    assert casual.ceiling_allowance_ms() - ladder.ceiling_allowance_ms() == settings.CARDROOM_CASUAL_TOTAL_SECONDS * 1000


def test_each_kind_s_message_is_its_task_s():
    keys = {kind: match_kinds.policy_for(kind).message_key(7, 3) for kind in Match.Kind.values}
    assert keys == {
        Match.Kind.LADDER: (enqueue.PLAY_MATCH, 7),
        Match.Kind.TOURNAMENT: (enqueue.PLAY_MATCH, 7),
        Match.Kind.VALIDATION: (enqueue.VALIDATE_VERSION, 3),
        Match.Kind.CASUAL: (enqueue.PLAY_CASUAL_MATCH, 7),
    }
    assert match_kinds.kinds(resent_by_sweep=False) == [Match.Kind.TOURNAMENT]
    assert match_kinds.kinds(has_person_seat=True) == [Match.Kind.CASUAL]
