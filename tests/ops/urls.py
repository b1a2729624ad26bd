"""The project's URLs plus the operator's (until config.urls mounts them)."""

from django.urls import include, path

from config.urls import urlpatterns as project

urlpatterns = [path("ops/", include("ladder.hosting.urls")), *[p for p in project if "ops/" not in str(p.pattern)]]
