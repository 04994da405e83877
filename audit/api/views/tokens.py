"""POST /api/v1/auth/token: an API token for a user name and password."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from audit.api.parsers import StrictJSONParser
from audit.api.throttles import TokenThrottle
from audit.signin import locked_message, signin_failed, signin_locked, signin_succeeded


class TokenApi(ObtainAuthToken):
    """Exchange a username and password for the user's API token.

    Throttled per client address, and under the sign-in lockout of the login pages
    (``audit.signin``): too many wrong passwords for an account or from an address answer 429.
    """

    throttle_classes = [TokenThrottle]
    parser_classes = [StrictJSONParser, FormParser, MultiPartParser]

    def post(self, request, *args, **kwargs):
        username = request.data.get("username") if hasattr(request.data, "get") else None
        username = username if isinstance(username, str) else ""
        wait = signin_locked(request, username)
        if wait is not None:
            raise exceptions.Throttled(wait, detail=locked_message(wait))
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            if username and "non_field_errors" in serializer.errors:  # the password did not match
                signin_failed(request, username)
            raise exceptions.ValidationError(serializer.errors)
        signin_succeeded(username)
        token, _ = Token.objects.get_or_create(user=serializer.validated_data["user"])
        return Response({"token": token.key})
