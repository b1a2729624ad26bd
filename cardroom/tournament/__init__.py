"""Tournaments: schedules (round-robin, Swiss, duplicate), seeds, standings
and confidence intervals. Pure Python: no Django (the platform's events and
``cardroom tournament`` share it)."""
