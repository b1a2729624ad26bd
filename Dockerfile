# cardroom's one image: web app, Celery worker and scheduler.
# Debian's python3 (/usr/bin/python3) is what sandboxed bots run on, so the
# image is Debian with its own Python, not a python:* image (/usr/local).
FROM debian:bookworm-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH \
    CARDROOM_VAR_DIR=/data/var CARDROOM_MEDIA_ROOT=/data/media
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv bubblewrap libseccomp2 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/venv

WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine engine
COPY bots bots
COPY cardroom cardroom
COPY ladder ladder
COPY config config
COPY docs docs
COPY manage.py ./
RUN pip install --no-cache-dir . \
 && SECRET_KEY=build-only python manage.py collectstatic --noinput \
 && mkdir -p /data/var /data/media

EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-", "--logger-class", "ladder.ops.gunicorn.JsonLogger"]
