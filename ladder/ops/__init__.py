"""The operator's corner: the status page and its JSON (``views``, mounted
under /ops/ by config.urls), and gunicorn's JSON logger (``gunicorn``)."""
