# cardroom's one image: web app, Celery worker, scheduler and migrations.
# Debian's python3 (/usr/bin/python3) is what sandboxed bots run on, so the
# image is Debian with its own Python, not a python:* image (/usr/local).
#
#   docker build --network host -t cardroom:latest .
#   docker build --network host --build-arg EXTRA_CA_CERTS="$(cat my-proxy-ca.crt)" -t cardroom:latest .
#
# EXTRA_CA_CERTS: PEM certificates (the text, not a path) that the *build*
# trusts besides Debian's, for a host whose outbound HTTPS passes through a
# re-signing proxy: pip cannot reach the package index otherwise. They are
# used in the build stage only and never reach the final image. Empty (the
# default): Debian's CA bundle alone.
#
# The base image is plain Debian bookworm; where no registry is reachable,
# scripts/containers/base-image.sh makes it with debootstrap.

FROM debian:bookworm-slim AS build
ARG EXTRA_CA_CERTS=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates gcc python3-dev \
 && if [ -n "$EXTRA_CA_CERTS" ]; then \
        printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/build-extra.crt \
     && update-ca-certificates; \
    fi \
 && python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
# The dependencies only, the author's toolkit's and the server extra's (the
# project itself runs from /app, below).
COPY pyproject.toml /src/
RUN python3 -c 'import tomllib; p = tomllib.load(open("/src/pyproject.toml", "rb"))["project"]; print("\n".join(p["dependencies"] + p["optional-dependencies"]["server"]))' \
      > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt
# The author's wheel of this very source, which the site offers for download
# (CARDROOM_DIST_DIR=/app/dist).
COPY README.md /src/
COPY engine /src/engine
COPY bots /src/bots
COPY cardroom /src/cardroom
COPY cardroom_sdk /src/cardroom_sdk
RUN pip wheel --quiet --no-deps --wheel-dir /dist /src \
 && rm -rf /opt/venv/lib/python3*/site-packages/pip /opt/venv/lib/python3*/site-packages/setuptools
# The rules compiled with mypyc for Debian's python3, the app's and the bots'
# (engine/form.py), by the same script as make setup, with mypy in a venv of
# its own that stays in this stage. Where the build fails, it says so in one
# line and the image runs the pure-Python reference.
COPY scripts/build_engine.py /src/scripts/build_engine.py
RUN python3 -m venv /opt/build \
 && /opt/build/bin/pip install --quiet "mypy>=1.10" setuptools \
 && /opt/build/bin/python /src/scripts/build_engine.py
# ONNX Runtime for python bots (decision 220), by the same script as make
# setup, with the build venv's pip (the wheel for Debian's python3; the app's
# venv lost its pip above), into Debian's
# /usr/local/lib/python3.11/dist-packages, copied as it is below.
COPY scripts/install-bot-packages.sh /src/scripts/install-bot-packages.sh
RUN sh /src/scripts/install-bot-packages.sh /opt/build/bin/pip
# bot-exec, the sandbox's start helper (cardroom/sandbox/bot_exec.c, decision
# 164), built here beside its source: the final image has no compiler.
RUN cd /src && python3 -c 'from cardroom.sandbox.botexec import build_prebuilt; print(build_prebuilt())'

FROM debian:bookworm-slim
# python3: the app's interpreter and the bots'; bubblewrap, libseccomp2 (the bots'
# seccomp filter, through pyseccomp) and util-linux
# (prlimit): the sandbox; tini: pid 1, so signals reach the Python processes
# (Python as pid 1 ignores SIGTERM) and orphans are reaped; nodejs and
# python3-numpy: the bots' node runtime and numpy (Debian's, under /usr,
# which is what the sandbox shows; cardroom/runtimes.py); ONNX Runtime is
# copied from the build stage.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 bubblewrap libseccomp2 util-linux tini nodejs python3-numpy \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && useradd --system --user-group --uid 990 --home-dir /data --no-create-home --shell /usr/sbin/nologin cardroom \
 && mkdir -p /data/var /data/media \
 && chown -R cardroom:cardroom /data
COPY --from=build /opt/venv /opt/venv
COPY --from=build /usr/local/lib/python3.11/dist-packages /usr/local/lib/python3.11/dist-packages
COPY --from=build /dist /app/dist
# The project as its source tree (BASE_DIR=/app: templates, static files and
# the rules pages in docs/ are found where the code expects them).
WORKDIR /app
COPY manage.py pyproject.toml ./
COPY --from=build /src/engine engine
COPY bots bots
COPY research research
COPY cardroom cardroom
# the luck estimator's inner loops, compiled with the engine (engine/form.py WITH_ENGINE)
COPY --from=build /src/cardroom/luck cardroom/luck
COPY --from=build /src/cardroom/sandbox/bot-exec-* cardroom/sandbox/
COPY cardroom_sdk cardroom_sdk
COPY ladder ladder
COPY config config
COPY docs docs
COPY deploy/docker/cardroom-worker /usr/local/bin/cardroom-worker
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH PYTHONPATH=/app \
    CARDROOM_VAR_DIR=/data/var CARDROOM_MEDIA_ROOT=/data/media
# Compiled once here: every process (a health check too) would otherwise
# compile Django, DRF and Celery from source at each start
# (PYTHONDONTWRITEBYTECODE: nothing is written at run time).
RUN python3 -m compileall -q -j 0 /opt/venv/lib /app \
 && SECRET_KEY=build-only python3 manage.py collectstatic --noinput -v0 \
 && chown -R cardroom:cardroom /data

# The web app, the scheduler and migrations run as this unprivileged user;
# the worker service runs as root (docker-compose.yml, docs/operations.md).
USER cardroom
EXPOSE 8000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["gunicorn", "config.wsgi:application", "--bind", "127.0.0.1:8000", "--workers", "3", "--access-logfile", "-", "--logger-class", "ladder.hosting.gunicorn.JsonLogger"]
