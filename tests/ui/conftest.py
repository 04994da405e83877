"""Fixtures of the UI tests: a stored audited answer, review cases, a logged-in browser.

Answers, claims and evidence are built with the factories in the shape ``audit_answer`` stores
them; cases go through the escalation services where they exist.
"""

from __future__ import annotations

import datetime as dt
import os

import pytest

from audit.management.browser import CHROMIUM, CHROMIUM_ARGS
from tests.factories import (
    AnswerFactory,
    ClaimFactory,
    EvidenceFactory,
    ReviewCaseFactory,
    VerificationRunFactory,
)

# Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from a
# thread with a running loop unless told the caller knows what it does.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

ANSWER_TEXT = (
    "Long-term potentiation requires NMDA receptor activation. "
    "The hippocampus has 12 layers. "
    "Dopamine neurons project to the striatum."
)


def build_answer(
    workspace, *, text: str = ANSWER_TEXT, revised_text: str = "", created_at=None, domain="neuroscience"
):
    """Store an audited answer of three claims (SUPPORTED, REFUTED, NEI) with evidence and a run."""
    from django.utils import timezone

    from audit.models.choices import Label, Verdict

    created_at = created_at or timezone.now()
    # As the revision service stores them: every attempt on the run, the kept text's ledger on the answer.
    attempts = (
        [
            {
                "attempt": 0,
                "author": "original",
                "text": text,
                "edits": [],
                "kept": False,
                "summary": {"coverage": 0.33, "unsupported_rate": 0.33},
            },
            {
                "attempt": 1,
                "author": "offline",
                "text": revised_text,
                "kept": True,
                "summary": {"coverage": 1.0, "unsupported_rate": 0.0},
                "edits": [
                    {
                        "claim_id": "c2",
                        "claim_text": "The hippocampus has 12 layers.",
                        "strategy": "remove",
                        "span": [58, 89],
                        "before": "The hippocampus has 12 layers.",
                        "after": "",
                        "reason": "contradicted by Hippocampus Anatomy",
                    }
                ],
            },
        ]
        if revised_text
        else []
    )
    answer = AnswerFactory(
        workspace=workspace,
        query="What does LTP require?",
        original_text=text,
        text=revised_text or text,
        mode="audit-local",
        domain=domain,
        created_at=created_at,
        revisions=[
            {
                "source": "revision_loop",
                "text": revised_text,
                "ledger": attempts[1]["edits"],
                "kept_attempt": 1,
                "attempts": 2,
            }
        ]
        if revised_text
        else [],
    )
    returned = answer.text  # the stored claims are those of the answer as returned
    sentences = []
    start = 0
    for part in returned.split(". "):
        sentence = part if part.endswith(".") else part + "."
        i = returned.index(sentence, start)
        sentences.append((i, i + len(sentence), sentence))
        start = i + len(sentence)
    specs = [
        (
            Label.SUPPORTED,
            Verdict.SUPPORTED,
            0.91,
            "Synaptic Plasticity Overview",
            "LTP is dependent on NMDA receptors in CA1.",
        ),
        (
            Label.REFUTED,
            Verdict.CONTRADICTED,
            0.08,
            "Hippocampus Anatomy",
            "The hippocampus proper has three layers.",
        ),
        (Label.NEI, Verdict.NOT_FOUND, 0.35, "Basal Ganglia", "The striatum receives input from the cortex."),
    ]
    claims = []
    for n, ((s, e, sentence), (label, verdict, conf, title, snippet)) in enumerate(
        zip(sentences, specs), start=1
    ):
        claim = ClaimFactory(
            answer=answer,
            claim_id=f"c{n}",
            text=sentence,
            span_start=s,
            span_end=e,
            label=label,
            verdict=verdict,
            confidence=conf,
            methods=["nli", "numeric"],
            metrics={"faithfulness": conf, "answer_relevance": 0.9, "selfcheck_disagreement": 0.1},
            drafted_at=created_at,
            verified_at=created_at + dt.timedelta(seconds=2),
        )
        EvidenceFactory(
            claim=claim,
            source_id=f"kb_chunk_{n}",
            title=title,
            uri=f"kb://{title.lower().replace(' ', '_')}",
            snippet=snippet,
            relevance=0.8,
            entailment=conf,
            provenance={"method": "hybrid", "query": sentence[:40]},
        )
        claims.append(claim)
    VerificationRunFactory(
        answer=answer,
        started_at=created_at,
        audit_score=0.62,
        faithfulness=0.33,
        coverage=0.66,
        claim_count=len(claims),
        revision_history=attempts,
    )
    return answer, claims


@pytest.fixture
def audited_answer(workspace):
    return build_answer(workspace)


def open_case(claim, *, reason: str = "UI test"):
    """Open a review case for a claim through the escalation service (as the intake would)."""
    return ReviewCaseFactory(claim=claim, reason=reason)


@pytest.fixture(scope="module")
def chromium(request):
    """One headless Chromium (Debian's /usr/bin/chromium) per test module: starting Playwright's
    driver and the browser costs seconds of CPU, a fresh context per test costs milliseconds.

    Module scope, not session: between its calls Playwright's sync API leaves its event loop
    marked as running in this thread, which would break ``asyncio.run`` in later modules.
    A module that drives Chromium is marked ``browser`` (its ``pytestmark``): ``make test-fast``
    leaves those out by that mark, so an unmarked one fails here."""
    from playwright.sync_api import sync_playwright

    if request.node.get_closest_marker("browser") is None:
        pytest.fail(f"{request.node.nodeid} drives Chromium: add pytest.mark.browser to its pytestmark")

    if not os.path.exists(CHROMIUM):
        pytest.skip("Chromium is not installed at /usr/bin/chromium (apt-get install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_page(chromium, live_server):
    """A page in a fresh browser context (its own cookies, storage and cache) pointed at the
    live server; the context closes after the test."""
    context = chromium.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15000)
    yield page
    context.close()


def login(page, live_server, user, next_path: str = "/"):
    page.goto(f"{live_server.url}/accounts/login/?next={next_path}")
    page.fill("#id_username", user.username)
    page.fill("#id_password", "pw-" + user.username)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")


def draw_every_chart(page, timeout: int = 30_000) -> None:
    """Scroll each dashboard chart into view (charts draw only when seen) and wait until it has drawn.

    Waits on selectors, not on a JavaScript predicate: the pages' CSP refuses the eval a polled
    predicate string needs."""
    for plot_id in page.eval_on_selector_all(".plot", "plots => plots.map(p => p.id)"):
        page.locator(f"#{plot_id}").scroll_into_view_if_needed()
        page.wait_for_selector(f"#{plot_id}[data-drawn=true]", timeout=timeout)
    page.evaluate("window.scrollTo(0, 0)")
