"""URL map: pages, the admin console and the API (each app contributes its own urls modules)."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from audit.security.signin import SignInView
from audit.web import views as audit_views

urlpatterns = [
    path("", audit_views.home, name="home"),
    path("healthz", audit_views.healthz, name="healthz"),
    # pages that do not extend base.html (admin, API docs) still get the icon browsers ask for
    path("favicon.ico", audit_views.favicon),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("audit.api.urls")),
    path("api/v1/", include("escalation.api.urls")),
    path("", include("audit.urls")),
    path("", include("escalation.urls")),
]

handler400 = "theoria.errors.bad_request"
handler403 = "theoria.errors.permission_denied"
handler404 = "theoria.errors.page_not_found"
handler500 = "theoria.errors.server_error"
