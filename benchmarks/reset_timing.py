"""How long the password-reset page takes to answer for a registered
(verified) address and for an unknown one, with a slow SMTP server: the
page's time must not tell the two apart (issue 25, item 1).

Two views are timed side by side, taking turns, on the same data:

* ``sync``: Django's stock PasswordResetView, which sends the e-mail in the
  request (what cardroom did before: the baseline);
* ``task``: cardroom's view (ladder.web.author_views.PasswordReset), which
  hands the address to the mail queue and answers.

Each request is a POST through the view itself (RequestFactory: no other
middleware), the e-mail going to a local SMTP sink (ladder.hosting.smtp_sink)
that takes ``--smtp-delay`` seconds per message. The database is a fresh
SQLite file under a temporary directory; the broker is CELERY_BROKER_URL
(a Redis database: only its ``mail`` queue is used, and emptied at the end).

    CELERY_BROKER_URL=redis://127.0.0.1:6379/3 .venv/bin/python benchmarks/reset_timing.py
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=40, help="requests per view and address")
    p.add_argument("--smtp-delay", type=float, default=0.6, help="seconds the SMTP sink takes per message")
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args(argv)


def setup(var: Path, smtp_port: int) -> None:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "reset-timing-not-a-secret",
            "CARDROOM_VAR_DIR": str(var),
            "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}",
            "CACHE_URL": "locmemcache://",
            "EMAIL_URL": f"smtp://127.0.0.1:{smtp_port}",
            "THROTTLE_RESET": "1000000/hour",
            "THROTTLE_MAIL_ADDRESS": "1000000/hour",
            "LOG_LEVEL": "WARNING",
        }
    )
    os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/3")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv=None) -> int:
    args = parse_args(argv)
    from ladder.hosting.smtp_sink import SmtpSink

    with tempfile.TemporaryDirectory(prefix="cardroom-reset-timing-") as tmp, SmtpSink(delay=args.smtp_delay) as sink:
        setup(Path(tmp), sink.port)
        import redis
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.contrib.auth import views as auth_views
        from django.contrib.auth.models import AnonymousUser
        from django.test import RequestFactory
        from django.utils import timezone

        import ladder.tasks  # noqa: F401  (the mail tasks, registered)
        from ladder.models import VerifiedEmail
        from ladder.web.author_views import PasswordReset

        user = get_user_model().objects.create_user("registered", email="registered@example.org", password="Timing-pass-4821")
        VerifiedEmail.objects.create(user=user, email=user.email, verified=timezone.now())
        views = {
            "sync": auth_views.PasswordResetView.as_view(
                email_template_name="cardroom/email/password_reset.txt", success_url="/password-reset/sent/"
            ),
            "task": PasswordReset.as_view(),
        }
        addresses = {"registered": "registered@example.org", "unknown": "nobody@example.org"}
        factory = RequestFactory()
        broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
        broker.delete("mail")

        def once(view: str, address: str) -> float:
            request = factory.post("/password-reset/", {"email": addresses[address]}, HTTP_HOST="127.0.0.1:8080")
            request._dont_enforce_csrf_checks = True
            request.user = AnonymousUser()  # (what AuthenticationMiddleware sets)
            t0 = time.perf_counter()
            response = views[view](request)
            elapsed = time.perf_counter() - t0
            assert response.status_code == 302, (view, address, response.status_code)
            return elapsed * 1000

        for view in views:  # warm up: templates, connections
            for address in addresses:
                once(view, address)
        rng = random.Random(args.seed)
        times: dict[tuple[str, str], list[float]] = {(v, a): [] for v in views for a in addresses}
        load_before = Path("/proc/loadavg").read_text().split()[:3]
        for _ in range(args.rounds):
            turn = list(times)
            rng.shuffle(turn)
            for view, address in turn:
                times[(view, address)].append(once(view, address))
        load_after = Path("/proc/loadavg").read_text().split()[:3]
        queued = broker.llen("mail")
        broker.delete("mail")

    print(f"password-reset page, {args.rounds} requests each, SMTP sink delay {args.smtp_delay * 1000:.0f} ms")
    print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)} (a shared, busy machine)")
    print(f"{'view':6} {'address':11} {'median ms':>10} {'p95 ms':>9}")
    for (view, address), values in times.items():
        print(f"{view:6} {address:11} {statistics.median(values):10.2f} {percentile(values, 0.95):9.2f}")
    for view in views:
        gap = statistics.median(times[(view, "registered")]) - statistics.median(times[(view, "unknown")])
        gap95 = percentile(times[(view, "registered")], 0.95) - percentile(times[(view, "unknown")], 0.95)
        print(f"{view}: registered minus unknown: median {gap:+.2f} ms, p95 {gap95:+.2f} ms")
    print(f"(task: {queued} reset messages left on the mail queue for a worker, then removed; sync: {len(sink.messages)} sent in the request)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
