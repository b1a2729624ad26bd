"""The sandbox policy: which launcher starts the bots of a match a worker
plays (``launcher_for``), and what a bot process that cannot be started
is (``PlatformLauncher``: the platform's failure, not the bot's).

ladder.services.matches plays every match with the policy registered at
start (ladder.apps registers this one); the services never import the
worker side. The sandbox itself is cardroom.sandbox's.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from cardroom.launch import Launcher
from ladder.models import BotVersion, Match
from ladder.services.matches import PlatformError


class PlatformLauncher(Launcher):
    """Wraps the real launcher: a bot process that cannot even be started
    (fork fails, the interpreter is missing, bwrap cannot run) is the
    platform's failure, not the bot's. (The runner would otherwise count an
    ``OSError`` from ``spawn`` as the bot's crash.)"""

    def __init__(self, inner: Launcher):
        self.inner = inner
        self.name = inner.name
        self.isolated = inner.isolated

    def spawn(self, root, argv, limits, seat=0):
        try:
            return self.inner.spawn(root, argv, limits, seat)
        except OSError as exc:
            raise PlatformError(f"could not start a bot process ({self.name} launcher): {exc}", Match.ErrorKind.BOT_START) from None


def launcher_for(versions: list[BotVersion]) -> Callable[[], Launcher]:
    """The launcher a match of these versions starts its bots with (the
    sandbox CARDROOM_SANDBOX names, wrapped in PlatformLauncher); a
    PlatformError (kind ``sandbox``) when the sandbox is unusable, or when
    there is none and an uploaded bot would run outside it."""
    from cardroom.launch import PlainLauncher
    from cardroom.sandbox import SandboxUnavailable, get_launcher

    mode = settings.CARDROOM_SANDBOX or None
    try:
        launcher = get_launcher(mode)
    except SandboxUnavailable as exc:
        raise PlatformError(f"the sandbox is unusable: {exc}", Match.ErrorKind.SANDBOX) from None
    if (isinstance(launcher, PlainLauncher) or not launcher.isolated) and not settings.CARDROOM_ALLOW_UNSANDBOXED_UPLOADS:
        uploaded = [v for v in versions if not v.bot.builtin]
        if uploaded:
            raise PlatformError(
                "CARDROOM_SANDBOX=none, and CARDROOM_ALLOW_UNSANDBOXED_UPLOADS is not set: "
                f"refusing to run uploaded bots ({', '.join(v.bot.name for v in uploaded)}) without a sandbox; "
                "use CARDROOM_SANDBOX=bwrap (or set CARDROOM_ALLOW_UNSANDBOXED_UPLOADS=1 on a trusted test set-up only)",
                Match.ErrorKind.SANDBOX,
            )
    wrapped = PlatformLauncher(launcher)
    return lambda: wrapped
