"""Token writes belong to a service (ladder.services.accounts: api_token,
rotate_token): no view, of the API or the website, touches the token table
itself (issue 39)."""

from __future__ import annotations

from pathlib import Path

LADDER = Path(__file__).resolve().parents[2] / "ladder"


def view_modules() -> list[Path]:
    """Every module of the views' layers: the API, the website, the
    operator's pages, and any views.py elsewhere in ladder/."""
    found = {*LADDER.glob("api/*.py"), *LADDER.glob("web/*.py"), *LADDER.rglob("views.py")}
    return sorted(p for p in found if "migrations" not in p.parts)


def test_no_view_writes_api_tokens_itself():
    modules = view_modules()
    assert LADDER / "api" / "views.py" in modules and LADDER / "web" / "views.py" in modules
    offenders = [str(p.relative_to(LADDER.parent)) for p in modules if "Token.objects" in p.read_text(encoding="utf-8")]
    assert offenders == [], "views write API tokens through ladder.services.accounts, not Token.objects: " + ", ".join(offenders)


def test_the_token_service_is_where_tokens_are_written():
    source = (LADDER / "services" / "accounts.py").read_text(encoding="utf-8")
    assert "def api_token(" in source and "def rotate_token(" in source and "Token.objects" in source
