from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("ladder.api.urls")),
    path("ops/", include("ladder.hosting.urls")),
    path("", include("ladder.web.urls")),
]
