"""Imports run one way: each of cardroom's packages imports only packages of
the layers below its own (LAYERS), and no module circle exists within one.
The graph is read from the source with ``ast``, every import counted
wherever it is (a function-level import hides a dependency from Python's
start-up, not from the design). The SDK is mounted into every bot's sandbox,
so it stands on the engine alone; the runtime (cardroom) may use the SDK and
the built-in bots; the Django app and the research scripts sit on top and do
not import each other."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Bottom first. A package may import its own modules and any package of a
# lower layer; the packages of one layer do not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("engine",),  # the rules: standard library only
    ("cardroom_sdk",),  # what a bot may import: the engine, worlds, research envs
    ("bots",),  # the built-in bots and starter kits (they may use the SDK)
    ("cardroom",),  # the runtime: runner, sandbox, tournaments, luck, the command line
    ("ladder", "research"),  # the Django app; the training scripts
    ("config",),  # the Django project: settings, URLs and the Celery app over ladder
    ("benchmarks", "scripts"),  # tools that measure or build any of the above
)
PACKAGES = tuple(package for layer in LAYERS for package in layer)
# Top-level folders that hold no code of ours to layer.
NOT_CODE = {"tests", "docs", "deploy", "dist", "build", "var", "node_modules"}


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


def layer_of(module: str) -> int:
    top = module.split(".")[0]
    return next(i for i, layer in enumerate(LAYERS) if top in layer)


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes up a layer or across to a peer package of the
    same layer, as "importer -> imported"."""
    found = []
    for module, imports in sorted(graph.items()):
        for imported in sorted(imports):
            if module.split(".")[0] == imported.split(".")[0]:
                continue
            if layer_of(imported) >= layer_of(module):
                found.append(f"{module} -> {imported}")
    return found


def test_every_package_has_a_layer():
    """A new top-level package cannot escape the check: every folder of the
    checkout with Python in it is in LAYERS (or holds no code of ours)."""
    folders = {
        path.name
        for path in ROOT.iterdir()
        if path.is_dir() and not path.name.startswith(".") and not path.name.endswith(".egg-info") and any(path.rglob("*.py"))
    }
    assert folders - NOT_CODE == set(PACKAGES)


def test_imports_run_down_the_layers():
    graph = import_graph()
    assert "engine.allegra.game" in graph["cardroom_sdk.worlds"]  # it reads the source
    found = wrong_way(graph)
    assert found == [], "imports against the layer order (engine, cardroom_sdk, bots, cardroom, ladder|research, config, tools): " + "; ".join(found)


def test_a_planted_reverse_import_is_caught(tmp_path):
    """The checker itself: an engine module importing the Django app, the
    SDK importing the runtime inside a function, and the research scripts
    importing their peer ladder are each reported."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "ladder" / "models.py").write_text("import engine.core\n")
    (tmp_path / "engine" / "core.py").write_text("from ladder import models\n")
    (tmp_path / "cardroom" / "runner.py").write_text("")
    (tmp_path / "cardroom_sdk" / "gym.py").write_text("def opponents():\n    from cardroom.runner import make_player\n")
    (tmp_path / "research" / "train.py").write_text("from ladder.models import Match\n")
    assert wrong_way(import_graph(tmp_path)) == [
        "cardroom_sdk.gym -> cardroom.runner",
        "engine.core -> ladder.models",
        "research.train -> ladder.models",
    ]


def test_no_import_circle_among_our_modules():
    graph = import_graph()
    assert len(graph) > 100 and "ladder.api.errors" in graph["ladder.api.views"]  # it reads the source
    found = [" -> ".join(c) for c in circles(graph)]
    assert found == [], "import circles (make each dependency one-way): " + "; ".join(found)


def test_the_graph_sees_a_function_level_import_circle(tmp_path):
    """The detector itself: a circle closed only inside a function, and
    one through a relative import, are both found."""
    (tmp_path / "ladder" / "api").mkdir(parents=True)
    for package in PACKAGES:
        if package != "ladder":
            (tmp_path / package).mkdir()
    (tmp_path / "ladder" / "__init__.py").write_text("")
    (tmp_path / "ladder" / "api" / "__init__.py").write_text("")
    (tmp_path / "ladder" / "api" / "views.py").write_text("from ladder.api.errors import handler\n")
    (tmp_path / "ladder" / "api" / "errors.py").write_text("def handler():\n    from .views import FilterError\n")
    (tmp_path / "ladder" / "selectors.py").write_text("from ladder import services\n")
    (tmp_path / "ladder" / "services.py").write_text("import ladder.api.views\n")
    [circle] = circles(import_graph(tmp_path))
    assert set(circle) == {"ladder.api.views", "ladder.api.errors"} and circle[0] == circle[-1]
