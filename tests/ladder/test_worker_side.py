"""The seats a worker plays (a person's, ladder.worker) and the sandbox
policy live on the worker side: the services hold no runner Player, and
never import ladder.worker, which the tasks call (issue 39)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def players_and_worker_imports(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b).split(".")[-1].endswith("Player") for b in node.bases):
            found.append(f"class {node.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ladder.worker"):
            found.append(f"from {node.module}")
        elif isinstance(node, ast.ImportFrom) and node.module == "ladder" and any(a.name == "worker" for a in node.names):
            found.append("from ladder import worker")
        elif isinstance(node, ast.Import) and any(a.name.startswith("ladder.worker") for a in node.names):
            found.append("import ladder.worker")
    return found


def test_the_services_hold_no_runner_seat_and_never_import_the_worker_side():
    found = {}
    for path in sorted((ROOT / "ladder" / "services").rglob("*.py")):
        if hits := players_and_worker_imports(path.read_text()):
            found[path.name] = hits
    assert found == {}


def test_the_check_sees_a_seat_and_an_import_planted_in_a_service():
    planted = "from ladder.worker.casual import run\nclass HumanSeat(Player):\n    pass\n"
    assert players_and_worker_imports(planted) == ["from ladder.worker.casual", "class HumanSeat"]


def test_the_person_s_seat_is_a_runner_player_on_the_worker_side():
    from cardroom.players import Player
    from ladder.worker.casual import HumanSeat

    assert issubclass(HumanSeat, Player)


def test_the_app_plays_every_match_under_the_worker_side_s_sandbox_policy():
    from ladder.services import matches
    from ladder.worker import sandbox

    assert matches._launcher_policy is sandbox.launcher_for
