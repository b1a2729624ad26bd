"""Django settings, URLs, WSGI and the Celery app of cardroom."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
