"""cardroom's runtime: the match runner, bot processes, sandbox and CLI."""

__version__ = "0.1.0"
