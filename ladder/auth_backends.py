"""The lockout check before every login (django-axes)."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend


class LockoutBackend(AxesStandaloneBackend):
    """django-axes' lockout check, for every login that comes with a request
    (the login form, the admin's, the API's token endpoint: all HTTP logins
    do). An in-process check without one (the test client's login, a
    management command) has no client to lock out: it goes to the password
    check directly, where axes itself would refuse to answer."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
