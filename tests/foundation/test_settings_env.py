"""Settings read from the environment fail loudly on a bad value."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from theoria.settings.env import envbool, envint, envlist


def test_it_reads_booleans_strictly(monkeypatch):
    monkeypatch.setenv("X_FLAG", "yes")
    assert envbool("X_FLAG") is True
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        envbool("X_FLAG")


def test_it_reads_integers_with_a_minimum(monkeypatch):
    monkeypatch.setenv("X_INT", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        envint("X_INT", 5, minimum=1)
    monkeypatch.setenv("X_INT", "seven")
    with pytest.raises(ImproperlyConfigured, match="integer"):
        envint("X_INT", 5)
    monkeypatch.delenv("X_INT")
    assert envint("X_INT", 5) == 5


def test_it_splits_lists(monkeypatch):
    monkeypatch.setenv("X_LIST", "a, b,,c")
    assert envlist("X_LIST") == ["a", "b", "c"]
