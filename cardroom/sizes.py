"""Sizes as people read them: in MiB (1 MiB = 1,048,576 bytes), as the docs
state every limit, on the forms, in errors and in forfeits alike (decision
210). No Django here: the runner, the packages and the site all use it."""

from __future__ import annotations

KiB = 1024
MiB = 1024 * KiB


def format_size(n: int) -> str:
    """``512 MiB``, ``1.5 MiB``, ``64 KiB`` or ``100 bytes``: whole MiB
    plainly, other sizes of a MiB or more to a tenth, less in KiB or bytes."""
    if n >= MiB:
        return f"{n // MiB} MiB" if n % MiB == 0 else f"{n / MiB:.1f} MiB"
    if n >= KiB and n % KiB == 0:
        return f"{n // KiB} KiB"
    return f"{n} bytes" if n != 1 else "1 byte"
