"""Celery tasks: thin, take ids, call one service each."""

from __future__ import annotations

from celery import shared_task

from ladder.services import matches, matchmaking, validation


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def play_match(match_id: int) -> str:
    return matches.run_queued_match(match_id)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True, max_retries=5)
def validate_version(self, version_id: int) -> str:
    try:
        return validation.validate_version(version_id)
    except validation.ValidationRetry as exc:
        raise self.retry(exc=exc, countdown=30) from None


@shared_task(ignore_result=True)
def top_up_queues() -> list[int]:
    return matchmaking.top_up_queues()


@shared_task(ignore_result=True)
def reap_expired_leases() -> dict:
    return {"reaped": matches.reap_expired_leases(), "resent": matches.resend_stale_queued()}
