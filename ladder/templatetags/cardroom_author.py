"""Template filters of the bot author's pages."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from cardroom.sizes import format_size

register = template.Library()

# The site's own paths that validation logs name: a match page (perhaps at an
# event and view), a bot's log in a match, a document.
SITE_PATH = re.compile(r"(?<![\w/.])/(?:matches/\d+/(?:logs/\d+/|#event=\d+&view=[a-z0-9-]+)?|docs/[a-z-]+/(?:#[a-z0-9-]+)?)")


@register.filter
def link_site_paths(text: str) -> SafeString:
    """Escape the text, and make each path of the site in it a link."""
    out, last = [], 0
    for m in SITE_PATH.finditer(text or ""):
        out.append(escape(text[last : m.start()]))
        path = escape(m.group(0))
        out.append(f'<a href="{path}">{path}</a>')
        last = m.end()
    out.append(escape((text or "")[last:]))
    return mark_safe("".join(out))


@register.filter
def size(n) -> str:
    """A size in bytes as every page, error and doc writes it: ``10 MiB``
    (cardroom.sizes; Django's filesizeformat says "MB" for MiB)."""
    try:
        return format_size(int(n))
    except (TypeError, ValueError):
        return ""
