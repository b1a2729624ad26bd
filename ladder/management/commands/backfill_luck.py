"""Keep the luck of every rated ladder match that has none yet (played
before luck was kept, or whose worker stopped between recording the result
and its luck), then refresh the adjusted rankings. Idempotent: run it again
and it does only what is left; interrupted, it resumes where it stopped.

    manage.py backfill_luck                  # every match without luck, 100 a query
    manage.py backfill_luck --limit 1000     # at most 1000 matches this time
    manage.py backfill_luck --retry-failed   # also try again the matches whose luck failed
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from ladder.services import adjusted, luck


class Command(BaseCommand):
    help = "Compute and keep the luck of rated ladder matches that have none; refresh the adjusted rankings."

    def add_arguments(self, parser):
        parser.add_argument("--chunk", type=int, default=100, help="matches read per query (default 100)")
        parser.add_argument("--limit", type=int, default=None, help="at most this many matches this run")
        parser.add_argument("--ladder", type=int, default=None, help="only this ladder's matches (its id)")
        parser.add_argument(
            "--retry-failed", action="store_true", help="also the matches whose luck could not be computed"
        )
        parser.add_argument(
            "--no-refresh", action="store_true", help="leave the adjusted rankings to the periodic task"
        )

    def handle(
        self, *args, chunk: int, limit: int | None, ladder: int | None, retry_failed: bool, no_refresh: bool, **options
    ):
        done = luck.backfill(chunk=max(1, chunk), limit=limit, ladder_id=ladder, retry_failed=retry_failed)
        self.stdout.write(
            f"luck kept for {done['computed']} match(es); {done['failed']} could not be computed (rated plainly)"
        )
        if not no_refresh:
            refreshed = adjusted.refresh_all()
            self.stdout.write(f"adjusted rankings refreshed: {len(refreshed)} ladder(s)")
