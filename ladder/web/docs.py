"""The documents of docs/ published on the site under /docs/<slug>/, the
starter bots of bots/ as downloads, and the author's wheel (make dist).

Rendering is Python-Markdown with raw HTML switched off (the
``html_block`` preprocessor and the ``html`` inline pattern are removed, the
documented replacement of the old ``safe_mode="escape"``: HTML in a document
comes out as text), and every link checked: links between documents are
rewritten to their pages, links to the starter bots to their downloads,
links to files the site does not publish lose their target, and only
http(s), mailto and in-page links are kept. The result is cached until the
file changes."""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as etree
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

RENDER_VERSION = 1  # part of the cache key: bump it when the rendering changes


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
    Doc("sdk", "sdk.md", "The bot SDK", "cardroom_sdk: the protocol loop, the engine to simulate with, worlds sampled from what a seat knows."),
    Doc("ladder", "ladder.md", "The ladder", "From upload to the leaderboard: validation, ratings, matchmaking, failures."),
    Doc("replay-format", "replay-format.md", "The replay format", "The JSON document every match leaves, and what cardroom verify checks."),
    Doc("tournaments", "tournaments.md", "Events and tournaments", "Round-robin, Swiss and duplicate events: seeds, standings, intervals, cardroom tournament."),
    Doc("rules-allegory", "rules-allegory.md", "The rules of Allegory", "Bidding for Theme cards; the weakest Tale counts."),
    Doc("rules-allegra", "rules-allegra.md", "The rules of Allegra", "Golf with shared columns, knocks and triples."),
]
# The documents of docs/ the site does not publish, and why: every other one
# must be in DOCS (a test holds the two lists to the folder, so a new
# document cannot go missing from the site unnoticed, as tournaments.md once did).
UNPUBLISHED = {
    "operations.md": "for the operators of a server, not its users",
    "decisions.md": "the developers' record of design choices",
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

SAFE_SCHEMES = {"http", "https", "mailto"}


def docs_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs"


def starter_path(filename: str) -> Path | None:
    if filename not in STARTERS_BY_FILE:
        return None
    return Path(settings.BASE_DIR) / "bots" / filename


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


def _site_href(href: str) -> str | None:
    """Where a link of a document points on the site (None: nowhere)."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return href if parts.scheme.lower() in SAFE_SCHEMES else None
    if not parts.path:
        return href if parts.fragment else None  # "#section"
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    # Links are written relative to docs/ (the repository's layout).
    target = posixpath.normpath(posixpath.join("docs", parts.path))
    folder, name = posixpath.split(target)
    if folder == "docs" and name in DOCS_BY_FILE:
        return reverse("web-doc", args=[DOCS_BY_FILE[name].slug]) + fragment
    if folder == "bots" and name in STARTERS_BY_FILE:
        return reverse("web-starter", args=[name])
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


def render_file(path: Path, toc_depth: str = "2-3") -> tuple[str, str] | None:
    """A document as (HTML, table of contents), without its own title (the
    page shows it); cached until the file changes. None if unreadable."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = f"web:docs:{RENDER_VERSION}:{path.name}:{toc_depth}:{stat.st_mtime_ns}:{stat.st_size}"
    out = cache.get(key)
    if out is None:
        lines = path.read_text(encoding="utf-8").splitlines()
        if lines and lines[0].startswith("# "):
            lines = lines[1:]
        out = render_markdown("\n".join(lines), toc_depth)
        cache.set(key, out, 24 * 3600)
    return out
