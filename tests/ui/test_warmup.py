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


def test_the_warm_up_loads_the_url_configuration_and_compiles_every_page_template():
    import sys
    from pathlib import Path

    from django.conf import settings

    from audit.services.warmup import warm_pages

    pages = [p for d in settings.TEMPLATES[0]["DIRS"] for p in Path(d).rglob("*.html")]
    assert warm_pages() == len(pages)
    assert "theoria.urls" in sys.modules and "audit.web.views" in sys.modules


def test_the_server_says_it_is_ready_when_the_warm_up_has_finished(monkeypatch, capsys):
    from audit.services import warmup

    monkeypatch.setattr(warmup, "warm_models", lambda: 12.34)
    warmup.warm_in_background().join()
    assert "Theoria is ready: models, indexes, pages and one audit per workspace loaded in 12.3 s" in (
        capsys.readouterr().out
    )


def test_make_run_tells_a_person_to_wait_for_the_ready_line():
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    plan = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml", "run"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert "once the server prints 'Theoria is ready'" in plan
