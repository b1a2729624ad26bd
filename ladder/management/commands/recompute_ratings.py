"""Rebuild every rating from the stored results (the RatingChange history, in
the order the results were committed) and print where the live ratings differ.

    manage.py recompute_ratings           # rebuild, print differences, store the rebuilt ratings
    manage.py recompute_ratings --check   # print differences only; exit status 1 if there are any
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from ladder.services.ratings import recompute_all


class Command(BaseCommand):
    help = "Rebuild every rating from the stored results; print the differences from the live ratings."

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true",
            help="change nothing; exit with status 1 if the rebuilt ratings differ from the live ones",
        )

    def handle(self, *args, check: bool = False, **options):
        differences = recompute_all(write=not check)
        for line in differences:
            self.stdout.write(line)
        if not differences:
            self.stdout.write("the live ratings are exactly the ones the stored results give")
        elif check:
            raise CommandError(f"{len(differences)} difference(s) between the live and the rebuilt ratings", returncode=1)
        else:
            self.stdout.write(f"{len(differences)} difference(s); the rebuilt ratings are stored now")
