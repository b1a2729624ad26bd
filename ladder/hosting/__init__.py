"""Hosting the site: the operator's status page and its JSON (``views``,
mounted under /ops/ by config.urls), gunicorn's JSON logger (``gunicorn``),
the shared Redis cache backend (``redis_cache``), and the local nginx proxy
and SMTP sink that the tests and benchmarks run (``proxy``, ``smtp_sink``).
The figures the status page shows are ladder.services.ops's."""
