"""The documents of docs/ published on the site under /docs/<slug>/, the
starter bots of bots/ as downloads (the kits of bots/starters/ zipped on
request), and the author's wheel (make dist).

Rendering is Python-Markdown with raw HTML switched off (the
``html_block`` preprocessor and the ``html`` inline pattern are removed, the
documented replacement of the old ``safe_mode="escape"``: HTML in a document
comes out as text), and every link checked: links between documents are
rewritten to their pages, links to the starter bots to their downloads,
links to files the site does not publish lose their target, and only
http(s), mailto and in-page links are kept. The result is cached until the
file changes."""

from __future__ import annotations

import hashlib
import posixpath
import xml.etree.ElementTree as etree
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

RENDER_VERSION = 2  # part of the cache key: bump it when the rendering changes


@dataclass(frozen=True)
class Doc:
    slug: str
    filename: str
    title: str
    summary: str


DOCS = [
    Doc("first-bot", "", "Write your first bot", "From a starter bot to the leaderboard in five minutes."),
    Doc("bot-authors", "bot-authors.md", "Writing and packaging a bot", "Packages, the sandbox, limits, forfeits, testing locally."),
    Doc("protocol", "protocol.md", "The bot protocol", "The messages a bot reads and writes, the time limits, the actions."),
    Doc("runtimes", "runtimes.md", "Runtimes: Python, Node.js, native", "The languages a bot may be written in: exact versions, building a native bot, start-up time and memory."),
    Doc("sdk", "sdk.md", "The bot SDK", "cardroom_sdk: the protocol loop, the engine to simulate with, worlds sampled from what a seat knows."),
    Doc("train", "train.md", "Train a bot", "From a training run with numpy on the Gymnasium environment to a bot on the ladder."),
    Doc("play", "play.md", "Play against a bot", "Take a seat yourself against cardroom's bots: the page, your clock, leaving a match."),
    Doc("api", "api.md", "The REST API", "Every endpoint under /api/: tokens, bots and versions, matches, events, casual matches; errors and paging."),
    Doc("ladder", "ladder.md", "The ladder", "From upload to the leaderboard: validation, ratings, matchmaking, failures."),
    Doc("replay-format", "replay-format.md", "The replay format", "The JSON document every match leaves, and what cardroom verify checks."),
    Doc("luck", "luck.md", "Luck: results with chance taken out", "cardroom luck: how much of each seat's result chance gave it, from the replay alone, and how well that is measured."),
    Doc("tournaments", "tournaments.md", "Events and tournaments", "Round-robin, Swiss and duplicate events: seeds, standings, intervals, cardroom tournament."),
    Doc("rules-allegory", "rules-allegory.md", "The rules of Allegory", "Bidding for Theme cards; the weakest Tale counts."),
    Doc("rules-allegra", "rules-allegra.md", "The rules of Allegra", "Golf with shared columns, knocks and triples."),
]
# The documents of docs/ the site does not publish, and why: every other one
# must be in DOCS (a test holds the two lists to the folder, so a new
# document cannot go missing from the site unnoticed, as tournaments.md once did).
# docs/decisions/, the developers' record of design choices, is not published either.
UNPUBLISHED = {
    "operations.md": "for the operators of a server, not its users",
    "architecture.md": "for the developers of cardroom, not its users",
}
DOCS_BY_SLUG = {d.slug: d for d in DOCS}
DOCS_BY_FILE = {d.filename: d for d in DOCS if d.filename}


@dataclass(frozen=True)
class Starter:
    filename: str
    title: str
    game: str | None  # None: plays either game


STARTERS = [
    Starter("random_bot.py", "A random bot (both games): the whole protocol loop, nothing more", None),
    Starter("allegory_greedy.py", "A greedy Allegory bot: values cards and bids from the observation", "allegory"),
    Starter("allegra_greedy.py", "A greedy Allegra bot: swaps to lower its area, knocks when it pays", "allegra"),
]
STARTERS_BY_FILE = {s.filename: s for s in STARTERS}


@dataclass(frozen=True)
class StarterKit:
    """A folder of bots/starters/: a whole bot package for one runtime,
    downloaded as a zip that is itself a package (everything under one
    top-level folder named like the kit, the manifest in it)."""

    name: str
    runtime: str
    title: str

    @property
    def zip_name(self) -> str:
        return f"cardroom-starter-{self.name}.zip"


STARTER_KITS = [
    StarterKit("python-numpy", "python", "Python with numpy: a linear scorer over each legal action (both games)"),
    StarterKit("python-onnx", "python", "Python with ONNX Runtime: a policy trained with PyTorch, exported to ONNX (both games)"),
    StarterKit("node", "node", "Node.js, plain JavaScript, no npm packages: a random bot (both games)"),
    StarterKit("cpp", "native", "C++17, one file and a Makefile that builds a static binary: a random bot (both games)"),
    StarterKit("rust", "native", "Rust, one file and no crates, a Makefile that builds a static binary with rustc: a random bot (both games)"),
]
STARTER_KITS_BY_NAME = {k.name: k for k in STARTER_KITS}
# A kit's zip holds the sources an author starts from, never what a build
# or a local run left in the folder (the C++ and Rust binaries, and cargo's
# target/ folder, are listed in the kits' .gitignore).
_KIT_SKIPPED_DIRS = {"__pycache__", "node_modules", "logs"}
_ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # fixed, so the same sources make the same bytes

SAFE_SCHEMES = {"http", "https", "mailto"}


def docs_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs"


def starter_path(filename: str) -> Path | None:
    if filename not in STARTERS_BY_FILE:
        return None
    return Path(settings.BASE_DIR) / "bots" / filename


def folder_files(folder: Path) -> list[tuple[str, Path]]:
    """A downloadable folder's files as (path inside it, file), sorted:
    every regular file but those its .gitignore names (a name, a path, or a
    folder as ``target/``) and what builds and runs leave (caches, logs)."""
    ignore_file = folder / ".gitignore"
    patterns = ignore_file.read_text().split() if ignore_file.is_file() else []
    ignored = {p for p in patterns if not p.endswith("/")}  # a file's name or path (or a folder's)
    skipped_dirs = _KIT_SKIPPED_DIRS | {p.rstrip("/") for p in patterns}
    files = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_symlink() or not path.is_file() or skipped_dirs & set(relative.parts[:-1]):
            continue
        if relative.name in ignored or relative.as_posix() in ignored or path.suffix == ".pyc":
            continue
        files.append((relative.as_posix(), path))
    return files


def kit_files(kit: StarterKit) -> list[tuple[str, Path]]:
    return folder_files(Path(settings.BASE_DIR) / "bots" / "starters" / kit.name)


def folder_zip(folder: Path, top: str) -> bytes:
    """A folder as a zip with everything under one top-level folder ``top``,
    built in memory (a few files of a few kilobytes), byte for byte the
    same for the same sources. Executable files stay executable."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in folder_files(folder):
            info = zipfile.ZipInfo(f"{top}/{name}", date_time=_ZIP_DATE)
            mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    return out.getvalue()


def kit_zip(kit: StarterKit) -> bytes:
    """The kit as a zip of its folder (see StarterKit)."""
    return folder_zip(Path(settings.BASE_DIR) / "bots" / "starters" / kit.name, kit.name)


# The example trainer of "Train a bot" (research/: train.py and the policy
# it exports beside it), offered as one zip so that an author with only the
# wheel has it too.
TRAINER_ZIP = "cardroom-trainer.zip"
TRAINER_TOP = "cardroom-trainer"


def trainer_zip() -> bytes:
    return folder_zip(Path(settings.BASE_DIR) / "research", TRAINER_TOP)


@dataclass(frozen=True)
class Wheel:
    filename: str
    path: Path
    size: int


def author_wheel() -> Wheel | None:
    """The author's wheel of the version this server runs (built by
    ``make dist`` or the image into CARDROOM_DIST_DIR), or None where it has
    not been built: a wheel of another version is never offered."""
    from cardroom import __version__

    filename = f"cardroom-{__version__}-py3-none-any.whl"
    path = Path(settings.CARDROOM_DIST_DIR) / filename
    try:
        size = path.stat().st_size
    except OSError:
        return None
    return Wheel(filename, path, size)


# Site pages a document may link to by their path (not files of the repository).
SITE_PAGES = {"/play/": "web-play"}


def _site_href(href: str) -> str | None:
    """Where a link of a document points on the site (None: nowhere)."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return href if parts.scheme.lower() in SAFE_SCHEMES else None
    if not parts.path:
        return href if parts.fragment else None  # "#section"
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    if parts.path in SITE_PAGES:  # a page of the site itself, e.g. "Play against a bot"
        return reverse(SITE_PAGES[parts.path]) + (f"?{parts.query}" if parts.query else "") + fragment
    # Links are written relative to docs/ (the repository's layout).
    target = posixpath.normpath(posixpath.join("docs", parts.path))
    folder, name = posixpath.split(target)
    if folder == "docs" and name in DOCS_BY_FILE:
        return reverse("web-doc", args=[DOCS_BY_FILE[name].slug]) + fragment
    if folder == "bots" and name in STARTERS_BY_FILE:
        return reverse("web-starter", args=[name])
    if folder == "bots/starters" and name in STARTER_KITS_BY_NAME:
        return reverse("web-starter-kit", args=[name])
    if target == "research" or folder == "research":
        return reverse("web-trainer")
    return None


def _extension():
    from markdown.extensions import Extension
    from markdown.treeprocessors import Treeprocessor

    class CheckLinks(Treeprocessor):
        def run(self, root: etree.Element) -> None:
            for a in root.iter("a"):
                href = a.get("href")
                if href is None:
                    continue
                site = _site_href(href)
                if site is None:
                    del a.attrib["href"]
                    a.set("class", "unlinked")
                else:
                    a.set("href", site)
                    if urlsplit(site).scheme in ("http", "https"):
                        a.set("rel", "noopener noreferrer")
            for img in list(root.iter("img")):
                src = img.get("src") or ""
                if urlsplit(src).scheme.lower() not in ("http", "https"):
                    img.attrib.pop("src", None)

    class SafeDocs(Extension):
        def extendMarkdown(self, md):  # noqa: N802 (Python-Markdown's name)
            md.preprocessors.deregister("html_block")
            md.inlinePatterns.deregister("html")
            # After the inline patterns made the links (priority 0: last).
            md.treeprocessors.register(CheckLinks(md), "cardroom_links", 0)

    return SafeDocs()


def render_markdown(text: str, toc_depth: str = "2-3") -> tuple[str, str]:
    """(HTML, table of contents) of a Markdown text, with raw HTML escaped
    and links checked (see the module's docstring)."""
    import markdown

    md = markdown.Markdown(
        extensions=["tables", "fenced_code", "toc", "sane_lists", _extension()],
        extension_configs={"toc": {"permalink": "#", "permalink_title": "Link to this section", "toc_depth": toc_depth}},
        output_format="html",
    )
    return md.convert(text), md.toc


def render_file(path: Path, toc_depth: str = "2-3", inserts: dict[str, str] | None = None) -> tuple[str, str] | None:
    """A document as (HTML, table of contents), without its own title (the
    page shows it); cached until the file or an insert changes. None if
    unreadable. ``inserts`` maps a marker line of the file (an HTML comment,
    which GitHub hides) to the Markdown the site shows in its place."""
    try:
        stat = path.stat()
    except OSError:
        return None
    inserted = hashlib.sha256(repr(sorted((inserts or {}).items())).encode()).hexdigest()[:16]
    key = f"web:docs:{RENDER_VERSION}:{path.name}:{toc_depth}:{stat.st_mtime_ns}:{stat.st_size}:{inserted}"
    out = cache.get(key)
    if out is None:
        lines = path.read_text(encoding="utf-8").splitlines()
        if lines and lines[0].startswith("# "):
            lines = lines[1:]
        lines = [(inserts or {}).get(line.strip(), line) for line in lines]
        out = render_markdown("\n".join(lines), toc_depth)
        cache.set(key, out, 24 * 3600)
    return out
