"""POST /api/v1/auth/token: an API token for a user name and password."""

from __future__ import annotations

from rest_framework.authtoken.views import ObtainAuthToken

from audit.api.throttles import TokenThrottle


class TokenApi(ObtainAuthToken):
    """Exchange a username and password for the user's API token (throttled per client address)."""

    throttle_classes = [TokenThrottle]
