"""POST /api/v1/auth/token: an API token for a user name and password."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from audit.api.parsers import StrictJSONParser
from audit.api.throttles import TokenThrottle
from audit.security.signin import locked_message, signin_succeeded, signin_wait


class TokenApi(ObtainAuthToken):
    """Exchange a username and password for the user's API token.

    Throttled per client address, and under the sign-in rules of the login pages
    (``audit.security.signin``): too many wrong passwords for the account from this address, from this
    address for any account, or for the account from anywhere (a short, growing delay) answer 429.
    """

    throttle_classes = [TokenThrottle]
    parser_classes = [StrictJSONParser, FormParser, MultiPartParser]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        username = request.data.get("username") if hasattr(request.data, "get") else None
        username = username if isinstance(username, str) else ""
        found = signin_wait(request, username)
        if found is not None:
            raise exceptions.Throttled(found[0], detail=locked_message(*found))
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # a wrong password is counted by the user_login_failed signal (audit.security.signin, axes)
            found = signin_wait(request, username) if getattr(request, "axes_locked_out", False) else None
            if found is not None:
                raise exceptions.Throttled(found[0], detail=locked_message(*found))
            raise exceptions.ValidationError(serializer.errors)
        signin_succeeded(request, username)
        token, _ = Token.objects.get_or_create(user=serializer.validated_data["user"])
        return Response({"token": token.key})
