"""Mounted by config.urls as ``path("ops/", include("ladder.hosting.urls"))``:

* ``/ops/status/``      the status page (HTML, staff users only);
* ``/ops/status.json``  the same figures as JSON, public-safe: counts only
  (staff users also get each worker's name, host, pid and match).
"""

from django.urls import path

from ladder.hosting import views

urlpatterns = [
    path("status/", views.status_page, name="ops-status"),
    path("status.json", views.status_json, name="ops-status-json"),
]
