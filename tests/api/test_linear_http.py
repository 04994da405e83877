"""Every HTTP path that reads user text costs time roughly linear in the text's length, proved
through the Django test client on the adversarial families of ``tests/pipeline/scaling.py``.

A scaling check, not a time limit: each path's CPU time is measured at three or more sizes and
the growth exponent is fitted over them (about 1 for a linear path, 2 for a quadratic one; the
limit is ``scaling.MAX_EXPONENT``). Before these checks the answer page of ``"`a " x 30,000`` held
a worker for five minutes (the revision's word diff) and ``"[cite:" x 20,000`` never came back
from an audit.

The audit paths (API, answer form, knowledge-base upload, the page, queue, case and export of
the audited answer, the revision's decision and the nightly re-check) run on the families of the
probe of the running server; the answer page, which any stored answer reaches, on every family.
"""

from __future__ import annotations

import pytest

from tests.pipeline import scaling

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

AUDIT_SIZES = (8_000, 16_000, 32_000)
PAGE_SIZES = (16_000, 32_000, 64_000)


FORM_FAMILIES = ("citation starts", "number pairs", "code words")  # the audit again, through the form


@pytest.fixture
def paths(request, submitter, lead, admin_user_obj, workspace, settings, monkeypatch):
    """run(text) -> {path: CPU seconds} of every HTTP path over one planted answer.

    The API audits every size inline here (an unbounded inline budget): the cost measured is the
    audit's own, which the task queue runs the same way for an answer over the budget."""
    from audit import constants
    from tests.api.http_paths import planted_answer_paths

    monkeypatch.setattr(constants, "AUDIT_INLINE_COST_BUDGET", 10**12)
    settings.THEORIA = {**settings.THEORIA, "API_MAX_BODY_BYTES": 2_000_000}
    return planted_answer_paths(
        workspace=workspace,
        submitter=submitter,
        lead=lead,
        admin=admin_user_obj,
        with_form=request.node.callspec.params["family"] in FORM_FAMILIES,
    )


@pytest.mark.parametrize("family", scaling.PROBE_FAMILIES)
def test_every_http_path_over_a_planted_answer_grows_linearly(paths, family):
    exponents = scaling.path_exponents(paths, scaling.ADVERSARIAL[family], AUDIT_SIZES)
    costs = {
        step: {n: round(c, 2) for n, c in by_size.items()} for step, by_size in scaling.LAST_COSTS.items()
    }
    assert {step: round(e, 2) for step, e in exponents.items() if e > scaling.MAX_EXPONENT} == {}, costs


def test_the_answer_page_of_a_revised_answer_grows_linearly_on_every_family(client, lead, workspace):
    """A stored revised answer (claims over its sentences, the returned text a few sentences
    shorter) on every family: the page draws both texts, their diff and the claims' badges."""
    from audit.models import Answer
    from audit.pipeline.extraction import extract_claims
    from tests.factories import AnswerFactory, ClaimFactory, VerificationRunFactory

    client.force_login(lead)

    def run(text: str) -> dict[str, float]:
        revised = text[: len(text) // 3] + "This was revised. " + text[len(text) // 3 + 200 :]
        answer = AnswerFactory(workspace=workspace, query="q", text=revised, original_text=text)
        VerificationRunFactory(answer=answer)
        for draft in extract_claims(text)[:50]:
            ClaimFactory(
                answer=answer,
                claim_id=draft.claim_id,
                text=draft.text[:2000],
                span_start=draft.span[0],
                span_end=draft.span[1],
            )
        timer = scaling.StepTimer()
        response = timer("answer page", lambda: client.get(f"/answers/{answer.public_id}/"))
        assert response is None or response.status_code == 200
        Answer.objects.filter(pk=answer.pk).delete()
        return timer.costs

    found = {}
    for name, family in scaling.ADVERSARIAL.items():
        exponent = scaling.path_exponents(run, family, PAGE_SIZES)["answer page"]
        if exponent > scaling.MAX_EXPONENT:
            found[name] = round(exponent, 2)
    assert found == {}
