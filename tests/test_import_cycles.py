"""No import circle among cardroom's own modules: the house rule (writes in
ladder/services, reads in ladder/selectors, thin views and tasks) makes
every dependency one-way. The graph is read from the source with ``ast``,
every import counted wherever it is (a function-level import hides a circle
from Python's start-up, not from the design)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ladder", "cardroom", "engine", "bots", "config")


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (``from a import b``
    counts as a.b where b is a module, else as a)."""
    known = modules(root)

    def ours(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        imports = graph.setdefault(module, set())
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                imported = ours(target)
                if imported and imported != module:
                    imports.add(imported)
    return graph


def circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Every import circle, each as the modules along it (a, b, ..., a):
    the one graphlib finds, then again with its first edge cut."""
    graph = {module: set(imports) for module, imports in graph.items()}
    found = []
    while True:
        try:
            graphlib.TopologicalSorter(graph).prepare()
        except graphlib.CycleError as exc:
            circle = tuple(reversed(exc.args[1]))  # graphlib lists it against the arrows
            found.append(circle)
            graph[circle[0]].discard(circle[1])
        else:
            return found


def test_no_import_circle_among_our_modules():
    graph = import_graph()
    assert len(graph) > 100 and "ladder.api.errors" in graph["ladder.api.views"]  # it reads the source
    found = [" -> ".join(c) for c in circles(graph)]
    assert found == [], "import circles (make each dependency one-way): " + "; ".join(found)


def test_the_graph_sees_a_function_level_import_circle(tmp_path):
    """The detector itself: a circle closed only inside a function, and
    one through a relative import, are both found."""
    (tmp_path / "ladder" / "api").mkdir(parents=True)
    for package in PACKAGES[1:]:
        (tmp_path / package).mkdir()
    (tmp_path / "ladder" / "__init__.py").write_text("")
    (tmp_path / "ladder" / "api" / "__init__.py").write_text("")
    (tmp_path / "ladder" / "api" / "views.py").write_text("from ladder.api.errors import handler\n")
    (tmp_path / "ladder" / "api" / "errors.py").write_text("def handler():\n    from .views import FilterError\n")
    (tmp_path / "ladder" / "selectors.py").write_text("from ladder import services\n")
    (tmp_path / "ladder" / "services.py").write_text("import ladder.api.views\n")
    [circle] = circles(import_graph(tmp_path))
    assert set(circle) == {"ladder.api.views", "ladder.api.errors"} and circle[0] == circle[-1]
