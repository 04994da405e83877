"""Fixtures of the routing-by-doubt tests: real audits through POST /api/v1/audits (issue 44)."""

from __future__ import annotations

from tests.api.conftest import client_for, embedder  # noqa: F401 - shared API fixtures
from tests.redteam.conftest import front_end  # noqa: F401 - shared red-team fixture
