"""Fixtures shared by the whole suite: a workspace and one user per role.

Area-specific fixtures live in ``tests/<area>/conftest.py``; rows are built with the factories
of ``tests/factories.py``. Users get the role groups of ``audit.roles`` (created by migration 0002).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def fresh_llm_endpoints():
    """LLM endpoints (their circuit breakers, probed forms, slots) are per process: every test starts
    with none and leaves none, so tests sharing a process never share a breaker's state."""
    from audit.pipeline.llm.endpoint import endpoints_reset

    endpoints_reset()
    yield
    endpoints_reset()


@pytest.fixture
def workspace(db):
    from audit.services.workspaces import workspace_get_default

    return workspace_get_default()


@pytest.fixture
def make_user(db, workspace):
    """Return a factory: make_user("ann", roles.L1_ANALYST) -> User in the default workspace."""
    from tests.factories import UserFactory

    def factory(username: str, role: str | None = None, **extra):
        return UserFactory(username=username, role=role, workspace=workspace, **extra)

    return factory


@pytest.fixture
def admin_user_obj(make_user):
    from audit import roles

    return make_user("admin1", roles.ADMIN, is_staff=True, is_superuser=True)


@pytest.fixture
def analyst(make_user):
    from audit import roles

    return make_user("analyst1", roles.L1_ANALYST)


@pytest.fixture
def expert(make_user):
    from audit import roles

    return make_user("expert1", roles.L2_EXPERT)


@pytest.fixture
def lead(make_user):
    from audit import roles

    return make_user("lead1", roles.L3_LEAD)


@pytest.fixture
def auditor(make_user):
    from audit import roles

    return make_user("auditor1", roles.AUDITOR)


@pytest.fixture
def submitter(make_user):
    from audit import roles

    return make_user("frontend", roles.SUBMITTER)


@pytest.fixture(autouse=True)
def _fresh_kb_indexes():
    """Drop in-process KB indexes between tests: rolled-back rows reuse primary keys."""
    yield
    from audit.kb.search import kb_index_reset

    kb_index_reset()


_DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "live_server",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


@pytest.fixture(autouse=True)
def _fresh_throttles(request):
    """Start each test that uses the database with empty throttle and lockout counts and with the
    role groups.

    They live in the shared cache, the database cache table in the suite (as in a deployment
    without Redis): a test in a transaction rolls its counts back, a transactional test (a live
    server) would leave them to the next one.
    """
    if request.node.get_closest_marker("django_db") or _DATABASE_FIXTURES & set(request.fixturenames):
        request.getfixturevalue("_django_db_helper")  # the test's database, as pytest-django sets it up
        from django.contrib.auth.models import Group
        from django.core.cache import cache

        from audit import roles

        cache.clear()
        # The role groups come from a data migration: a transactional test's flush empties them, and
        # pytest-xdist (`make test`) may run a database test after one in the same worker.
        for name in roles.ALL_ROLES:
            Group.objects.get_or_create(name=name)
    yield


# 00:00:05 UTC on a Monday: five seconds into a minute, a quarter hour, an hour and a day
_THROTTLE_EPOCH = 1_798_416_005.0


@pytest.fixture(autouse=True)
def _throttle_windows_start_with_the_test(monkeypatch):
    """Run the throttles' clock from five seconds into a fresh window of every size, so no test's
    requests straddle a window boundary (the sliding window lets a burst there pass one more)."""
    import time

    from audit.security import throttling

    started = time.monotonic()
    monkeypatch.setattr(throttling, "_clock", lambda: _THROTTLE_EPOCH + time.monotonic() - started)


@pytest.fixture(autouse=True, scope="session")
def _transaction_guard_installed():
    """Embedding, the judges and the LLM client refuse to run inside a transaction the code opened."""
    from tests import transaction_guard

    transaction_guard.install()


@pytest.fixture(autouse=True)
def _no_long_work_in_transactions(_transaction_guard_installed):
    """Fail a test whose code embedded, judged or called the LLM inside ``atomic()`` (even when the
    code caught the guard's exception): see ``tests/transaction_guard.py``."""
    from tests import transaction_guard

    yield
    found = transaction_guard.take()
    if found:
        pytest.fail("Long work inside a database transaction:\n" + "\n".join(dict.fromkeys(found)))
