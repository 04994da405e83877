"""`make run` loads the models when the server starts: in runserver's serving process only."""

from __future__ import annotations

import pytest
from django.apps import apps


@pytest.mark.parametrize(
    "env, warmed",
    [
        ({"THEORIA_WARM_MODELS": "1", "RUN_MAIN": "true"}, True),  # runserver's serving process
        ({"THEORIA_WARM_MODELS": "1"}, False),  # its reloader, or the task worker (which forks)
        ({"RUN_MAIN": "true"}, False),  # a server started without `make run`'s switch
    ],
)
def test_the_models_are_warmed_in_the_serving_process_of_make_run_only(monkeypatch, env, warmed):
    from audit.services import warmup

    calls = []
    monkeypatch.delenv("THEORIA_WARM_MODELS", raising=False)
    monkeypatch.delenv("RUN_MAIN", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(warmup, "warm_in_background", lambda: calls.append(1))
    apps.get_app_config("audit").ready()
    assert bool(calls) is warmed


@pytest.mark.slow  # loads the embedding model and the judge
@pytest.mark.django_db
def test_warming_runs_one_audit_and_stores_nothing(workspace):
    from audit.models import Answer, Claim
    from audit.services.warmup import warm_models

    seconds = warm_models()
    assert seconds > 0
    assert Answer.objects.count() == 0 and Claim.objects.count() == 0
