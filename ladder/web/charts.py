"""Inline SVG drawn on the server: the bot page's rating chart and the
leaderboard's trend sparklines. No chart library, no script."""

from __future__ import annotations

import math
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    ticks = []
    v = start
    while v <= hi + 1e-9:
        ticks.append(round(v, 6))
        v += step
    return ticks


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 100 or float(v).is_integer() else f"{v:.1f}"


def sparkline(values: list[float], width: int = 84, height: int = 22) -> SafeString:
    if len(values) < 2:
        return mark_safe('<span class="muted">–</span>')
    lo, hi = min(values), max(values)
    span = hi - lo or 1.0
    step = (width - 4) / (len(values) - 1)
    pts = " ".join(f"{2 + i * step:.1f},{2 + (height - 4) * (1 - (v - lo) / span):.1f}" for i, v in enumerate(values))
    cls = "up" if values[-1] > values[0] else ("down" if values[-1] < values[0] else "flat")
    last_x = 2 + (len(values) - 1) * step
    last_y = 2 + (height - 4) * (1 - (values[-1] - lo) / span)
    label = f"Elo over the last {len(values) - 1} games: {values[0]:.0f} to {values[-1]:.0f}"
    return mark_safe(
        f'<svg class="spark {cls}" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{label}">'
        f"<title>{label}</title>"
        f'<polyline points="{pts}" fill="none" stroke-width="1.6" stroke-linejoin="round" stroke-linecap="round"/>'
        f'<circle cx="{last_x:.1f}" cy="{last_y:.1f}" r="2"/></svg>'
    )


def rating_chart(history: dict[str, Any], bot_name: str, ladder_name: str) -> SafeString:
    """Two panels sharing the x axis (game number): Elo, and OpenSkill (mu
    with a +-sigma band, and the ordinal mu - 3 sigma). Version changes are
    dashed vertical lines labelled with the version number."""
    points = history["points"]
    if not points:
        return mark_safe('<p class="muted">No rated games on this ladder yet.</p>')
    W, left, right = 760, 56, 14
    elo_top, elo_h = 18, 170
    os_top, os_h = elo_top + elo_h + 40, 150
    H = os_top + os_h + 34
    start = history.get("start")
    games = [p["game"] for p in points]
    g0 = start["game"] if start else games[0]
    g1 = games[-1]
    if g1 == g0:
        g0 -= 1

    def x(g: float) -> float:
        return left + (W - left - right) * (g - g0) / (g1 - g0)

    elos = [p["elo"] for p in points] + ([start["elo"]] if start else [])
    e_lo, e_hi = min(elos), max(elos)
    pad = max(5.0, (e_hi - e_lo) * 0.08)
    e_lo, e_hi = e_lo - pad, e_hi + pad

    def ye(v: float) -> float:
        return elo_top + elo_h * (1 - (v - e_lo) / (e_hi - e_lo))

    os_points = ([start] if start else []) + points
    lows = [min(p["ordinal"], p["mu"] - p["sigma"]) for p in os_points]
    highs = [p["mu"] + p["sigma"] for p in os_points]
    o_lo, o_hi = min(lows), max(highs)
    pad = max(0.5, (o_hi - o_lo) * 0.08)
    o_lo, o_hi = o_lo - pad, o_hi + pad

    def yo(v: float) -> float:
        return os_top + os_h * (1 - (v - o_lo) / (o_hi - o_lo))

    out: list[str] = []
    title = f"Rating history of {bot_name} on {ladder_name}"
    out.append(
        f'<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-labelledby="chart-title chart-desc" '
        f'preserveAspectRatio="xMidYMid meet" data-points="{len(points)}">'
    )
    out.append(f'<title id="chart-title">{escape(title)}</title>')
    last = points[-1]
    out.append(
        f'<desc id="chart-desc">{len(points)} points over games {g0 + 1} to {g1}. '
        f'Now: Elo {last["elo"]:.0f}, OpenSkill ordinal {last["ordinal"]:.2f} (mu {last["mu"]:.2f}, sigma {last["sigma"]:.2f}).</desc>'
    )
    # panels and grid
    for top, h, lo, hi, label, fn in (
        (elo_top, elo_h, e_lo, e_hi, "Elo", ye),
        (os_top, os_h, o_lo, o_hi, "OpenSkill", yo),
    ):
        out.append(f'<rect class="panel" x="{left}" y="{top}" width="{W - left - right}" height="{h}"/>')
        for t in _nice_ticks(lo, hi, 4):
            yy = fn(t)
            out.append(f'<line class="grid" x1="{left}" x2="{W - right}" y1="{yy:.1f}" y2="{yy:.1f}"/>')
            out.append(f'<text class="tick" x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
        out.append(f'<text class="panel-label" x="{left + 6}" y="{top + 14}">{label}</text>')
    for t in _nice_ticks(g0, g1, 6):
        if t < g0 or t > g1 or not float(t).is_integer():
            continue
        xx = x(t)
        out.append(f'<text class="tick" x="{xx:.1f}" y="{H - 14}" text-anchor="middle">{int(t)}</text>')
    out.append(f'<text class="axis-label" x="{W - right}" y="{H - 2}" text-anchor="end">game</text>')
    # version changes
    for m in history["marks"]:
        if m["index"] == 0 and history["shown"] < history["total"]:
            continue  # the window starts mid-version: not a change
        xx = x(m["game"] - 0.5)
        out.append(
            f'<g class="version-mark"><line x1="{xx:.1f}" x2="{xx:.1f}" y1="{elo_top}" y2="{os_top + os_h}"/>'
            f'<text x="{xx + 3:.1f}" y="{elo_top - 5}">v{m["version"]}</text>'
            f'<title>version {m["version"]} from game {m["game"]}</title></g>'
        )
    # OpenSkill band and lines
    band = [f"{x(p['game']):.1f},{yo(p['mu'] + p['sigma']):.1f}" for p in os_points]
    band += [f"{x(p['game']):.1f},{yo(p['mu'] - p['sigma']):.1f}" for p in reversed(os_points)]
    if len(os_points) > 1:
        out.append(f'<polygon class="band" points="{" ".join(band)}"><title>mu ± sigma</title></polygon>')
    mu_line = " ".join(f"{x(p['game']):.1f},{yo(p['mu']):.1f}" for p in os_points)
    ord_line = " ".join(f"{x(p['game']):.1f},{yo(p['ordinal']):.1f}" for p in os_points)
    out.append(f'<polyline class="line mu" points="{mu_line}"/>')
    out.append(f'<polyline class="line ordinal" points="{ord_line}"/>')
    # Elo line (from the rating before the first game shown)
    elo_pts = ([f"{x(start['game']):.1f},{ye(start['elo']):.1f}"] if start else []) + [
        f"{x(p['game']):.1f},{ye(p['elo']):.1f}" for p in points
    ]
    out.append(f'<polyline class="line elo" points="{" ".join(elo_pts)}"/>')
    if len(points) <= 120:
        for p in points:
            out.append(
                f'<circle class="pt elo" cx="{x(p["game"]):.1f}" cy="{ye(p["elo"]):.1f}" r="2.4">'
                f'<title>game {p["game"]} (match {p["match"]}): Elo {p["elo"]:.2f}</title></circle>'
            )
            out.append(
                f'<circle class="pt ordinal" cx="{x(p["game"]):.1f}" cy="{yo(p["ordinal"]):.1f}" r="2.2">'
                f'<title>game {p["game"]}: ordinal {p["ordinal"]:.2f}, mu {p["mu"]:.2f}, sigma {p["sigma"]:.2f}</title></circle>'
            )
    out.append("</svg>")
    # The legend is HTML beside the chart, not drawn in it: on a phone the
    # chart scales down to the screen's width and the legend wraps instead.
    out.append(
        '<ul class="chart-legend">'
        '<li><span class="swatch mu"></span>mu</li>'
        '<li><span class="swatch band"></span>mu ± sigma</li>'
        '<li><span class="swatch ordinal"></span>ordinal (mu − 3 sigma)</li>'
        '<li><span class="swatch version"></span>new version</li>'
        "</ul>"
    )
    return mark_safe("".join(out))
