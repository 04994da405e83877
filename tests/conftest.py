"""Fixtures shared by the whole suite: a workspace and one user per role.

Area-specific fixtures live in ``tests/<area>/conftest.py``; rows are built with the factories
of ``tests/factories.py``. Users get the role groups of ``audit.roles`` (created by migration 0002).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


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
    from audit.kb_search import kb_index_reset

    kb_index_reset()


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Start each test with empty throttle counts (they live in the process's cache)."""
    from django.core.cache import cache

    cache.clear()
    yield
