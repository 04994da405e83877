"""A month of demo history for a fresh `make run`: answers, verdicts, review cases and nightly reports.

The verdicts are real: a fixed bank of claims about the demo knowledge base (most true, some
with a wrong number, a flipped statement or a fact the knowledge base does not hold) is verified
once by the pipeline (``audit.pipeline.verify_claims``) against the knowledge-base chunks of the
document each claim is about. Each past day then gets a handful of answers built from the bank
by a random generator seeded with the workspace and the day, stored in the shape ``audit_and_store``
stores them, back-dated to that day. Claims that need people open COMP-ESC cases at that time,
and each case lives a plausible life (acknowledged in minutes, sometimes late; escalated to L2
or L3; resolved with a confirmation, a relabel or a knowledge-base correction), written as the
review events the services write, at those past times. Finally the real nightly auditor runs
for each day, so the nightly reports are its own.

Deterministic (same bank, same seeds, same verifier) and idempotent: a day that already holds
history answers is left alone, so running it again adds only the days that are missing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import time
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from audit import constants, roles
from audit.models import Answer, AuditEvent, Chunk, Claim, Evidence, UserProfile, VerificationRun, Workspace
from audit.models.choices import Label
from audit.pipeline.audit import verify_claims
from audit.selectors.api import thresholds_for
from audit.services.nightly import nightly_audit_run
from audit.services.reviewed_examples import case_decision_example_record
from escalation import policy
from escalation import selectors as esc_selectors
from escalation.models import CurationItem, Notification, ReviewCase, ReviewEvent
from escalation.services import RELABEL_DECISIONS, cases_open_for_answer

HISTORY_PREFIX = "demo-history"  # conversation ids of history answers: demo-history-YYYY-MM-DD-N

# (document uri, domain, question, claim, importance). Most are true to the document; the rest
# carry the errors RAG answers make: a wrong number, a flipped statement, an absent fact.
BANK = [
    (
        "kb://synaptic_plasticity_overview",
        "neuroscience",
        "What does LTP require?",
        "LTP at the Schaffer collateral synapses of the CA1 region depends on NMDA receptor activation.",
        "material",
    ),
    (
        "kb://synaptic_plasticity_overview",
        "neuroscience",
        "What does LTP require?",
        "Blocking NMDA receptors with AP5 prevents the induction of LTP.",
        "material",
    ),
    (
        "kb://synaptic_plasticity_overview",
        "neuroscience",
        "Who described LTP first?",
        "LTP was first described by Bliss and Lømo in 1973.",
        "minor",
    ),
    (
        "kb://synaptic_plasticity_overview",
        "neuroscience",
        "Who described LTP first?",
        "LTP was first described by Bliss and Lømo in 1985.",
        "minor",
    ),
    (
        "kb://synaptic_plasticity_overview",
        "neuroscience",
        "How is LTD induced?",
        "Long-term depression is induced by low-frequency stimulation at about 1 Hz for 10 to 15 minutes.",
        "material",
    ),
    (
        "kb://synaptic_plasticity_overview",
        "neuroscience",
        "What does the NMDA receptor do?",
        "At resting membrane potential the NMDA receptor channel is blocked by magnesium ions.",
        "material",
    ),
    (
        "kb://synaptic_plasticity_overview",
        "neuroscience",
        "What does the NMDA receptor do?",
        "NMDA receptors are blocked by sodium ions at rest.",
        "material",
    ),
    (
        "kb://hippocampus_memory",
        "neuroscience",
        "What happened to patient H.M.?",
        "Patient H.M. had both medial temporal lobes removed in 1953 to treat epilepsy.",
        "material",
    ),
    (
        "kb://hippocampus_memory",
        "neuroscience",
        "What happened to patient H.M.?",
        "After the surgery H.M. could not form new long-term declarative memories.",
        "material",
    ),
    (
        "kb://hippocampus_memory",
        "neuroscience",
        "How many neurons does the hippocampus hold?",
        "The adult human hippocampus contains roughly 40 million neurons in each hemisphere.",
        "minor",
    ),
    (
        "kb://hippocampus_memory",
        "neuroscience",
        "How many neurons does the hippocampus hold?",
        "The adult human hippocampus contains roughly 400 million neurons in each hemisphere.",
        "minor",
    ),
    (
        "kb://hippocampus_memory",
        "neuroscience",
        "Who discovered place cells?",
        "John O'Keefe described place cells in 1971.",
        "minor",
    ),
    (
        "kb://hippocampus_memory",
        "neuroscience",
        "Who discovered place cells?",
        "Place cells were first described in the amygdala of rats.",
        "material",
    ),
    (
        "kb://dopamine_reward",
        "neuroscience",
        "What do dopamine neurons signal?",
        "Midbrain dopamine neurons signal a reward prediction error.",
        "material",
    ),
    (
        "kb://dopamine_reward",
        "neuroscience",
        "What do dopamine neurons signal?",
        "Dopamine neurons pause when a predicted reward is omitted.",
        "material",
    ),
    (
        "kb://dopamine_reward",
        "neuroscience",
        "When do Parkinson's symptoms appear?",
        "Motor symptoms of Parkinson's disease appear after about 60 to 80 percent of nigral dopamine neurons are lost.",
        "critical",
    ),
    (
        "kb://dopamine_reward",
        "neuroscience",
        "When do Parkinson's symptoms appear?",
        "Levodopa was first synthesized in 1911.",
        "minor",
    ),
    (
        "kb://policy/escalation_runbook",
        "compliance",
        "How fast must a case be acknowledged?",
        "Level 1 on-call analysts must acknowledge and triage a case within 30 minutes.",
        "critical",
    ),
    (
        "kb://policy/escalation_runbook",
        "compliance",
        "How long do Level 2 reviewers have?",
        "Level 2 domain expert reviewers have 4 business hours to verify a claim.",
        "critical",
    ),
    (
        "kb://policy/escalation_runbook",
        "compliance",
        "How long do Level 3 leads have?",
        "Level 3 compliance leads have 2 business days to arbitrate disputes.",
        "critical",
    ),
    (
        "kb://policy/escalation_runbook",
        "compliance",
        "Where do escalation alerts go?",
        "Alerts are sent to the #compliance-alerts channel and to compliance-oncall@theoria.ai.",
        "material",
    ),
    (
        "kb://policy/data_retention",
        "compliance",
        "How long are audit records kept?",
        "Audit records are retained for 90 days by default.",
        "critical",
    ),
    (
        "kb://policy/data_retention",
        "compliance",
        "How long are audit records kept?",
        "Audit records are retained for 30 days by default.",
        "critical",
    ),
    (
        "kb://policy/data_retention",
        "compliance",
        "Can records of open cases be purged?",
        "Records tied to an open escalation case must not be purged until the case is resolved.",
        "material",
    ),
    (
        "kb://policy/ai_disclosure",
        "compliance",
        "Must AI answers be labelled?",
        "Every answer generated by the assistant must be labelled as AI-generated.",
        "critical",
    ),
    (
        "kb://policy/ai_disclosure",
        "compliance",
        "What about medication answers?",
        "Answers about medication dosage must include a recommendation to consult a qualified clinician.",
        "critical",
    ),
    (
        "kb://policy/ai_disclosure",
        "compliance",
        "What about medication answers?",
        "Medication answers must be approved by two pharmacists before they are shown.",
        "critical",
    ),
]
DECISIONS = [
    ("confirm", 45),
    ("relabel_supported", 20),
    ("relabel_refuted", 12),
    ("relabel_nei", 5),
    ("kb_correction", 18),
]
REVIEWERS = {
    1: ("demo-analyst", roles.L1_ANALYST),
    2: ("demo-expert", roles.L2_EXPERT),
    3: ("demo-lead", roles.L3_LEAD),
}


@dataclass
class HistoryOutcome:
    days_added: int
    days_present: int
    answers: int
    claims: int
    cases: int
    nightly_reports: int
    seconds: float


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _verdicts(workspace: Workspace):
    """Verify the bank once against the chunks of each claim's document; return [(bank row, verdict, chunks)]."""

    chunks = {}
    for chunk in (
        Chunk.objects.filter(document__workspace=workspace).select_related("document").order_by("id")
    ):
        chunks.setdefault(chunk.document.uri, []).append(chunk)
    rows = [row for row in BANK if row[0] in chunks]
    pairs = [
        (
            row[3],
            [
                {
                    "id": f"kb_chunk_{c.pk}",
                    "title": c.document.title,
                    "uri": c.document.uri,
                    "text": c.text,
                    "published_at": c.document.published_at,
                }
                for c in chunks[row[0]]
            ],
        )
        for row in rows
    ]
    verify_claims(pairs[:1], thresholds=thresholds_for(workspace))  # load the model outside the timing
    started = time.perf_counter()
    verdicts = verify_claims(pairs, thresholds=thresholds_for(workspace))
    per_claim_ms = 1000 * (time.perf_counter() - started) / max(len(pairs), 1)
    return [(row, v, chunks[row[0]]) for row, v in zip(rows, verdicts)], per_claim_ms


def _reviewers(workspace: Workspace) -> dict[int, object]:
    """The demo reviewers (one per tier, no password: they cannot sign in), created once."""

    users = {}
    for tier, (username, role) in REVIEWERS.items():
        user, created = get_user_model().objects.get_or_create(
            username=username, defaults={"is_active": True}
        )
        if created:
            user.set_unusable_password()
            user.save()
            user.groups.add(Group.objects.get_or_create(name=role)[0])
        UserProfile.objects.get_or_create(user=user, defaults={"workspace": workspace})
        users[tier] = user
    return users


# long: demo data: one answer's rows in the shape audit_and_store writes them
def _store_answer(workspace, day_start, rng, bank, per_claim_ms, number) -> Answer:
    """One answer of two to four bank claims about one document, stored as audit_and_store stores it."""
    uri = rng.choice(sorted({row[0] for row, _, _ in bank}))
    pool = [item for item in bank if item[0][0] == uri]
    # mostly true answers: a wrong claim is drawn with 0.6 of a true one's weight
    weights = [1.0 if item[1].label == Label.SUPPORTED else 0.6 for item in pool]
    picked = []
    for _ in range(min(len(pool), rng.randint(2, 4))):
        item = rng.choices(pool, weights=weights)[0]
        if item not in picked:
            picked.append(item)
    created = day_start + dt.timedelta(
        hours=rng.randint(8, 18), minutes=rng.randint(0, 59), seconds=rng.randint(0, 59)
    )
    text = " ".join(row[3] for row, _, _ in picked)
    mode = constants.MODE_NORMAL if rng.random() < 0.08 else constants.MODE_AUDIT_LOCAL
    answer = Answer.objects.create(
        workspace=workspace,
        conversation_id=f"{HISTORY_PREFIX}-{day_start.date().isoformat()}-{number}",
        query=picked[0][0][2],
        text=text,
        original_text=text,
        mode=mode,
        domain=picked[0][0][1],
        created_at=created,
        public_id=f"a-{created:%Y-%m-%d}-h{hashlib.sha256(f'{workspace.slug}{created}{number}'.encode()).hexdigest()[:7]}",
    )
    AuditEvent.objects.create(
        workspace=workspace,
        actor_label="demo history",
        at=created,
        action="answer.recorded" if mode == constants.MODE_NORMAL else "answer.audited",
        object_type="audit.answer",
        object_id=str(answer.pk),
        details={"demo_history": True},
    )
    if mode == constants.MODE_NORMAL:
        return answer
    # the measured verification time of these claims, plus extraction and retrieval (about as long again)
    duration = per_claim_ms * len(picked) * rng.uniform(1.6, 2.4) + rng.uniform(40, 120)
    cursor = 0
    supported = 0
    for n, (row, verdict, _chunks) in enumerate(picked, start=1):
        start = text.index(row[3], cursor)
        cursor = start + len(row[3])
        supported += verdict.label == Label.SUPPORTED
        claim = Claim.objects.create(
            answer=answer,
            claim_id=f"c{n}",
            text=row[3],
            span_start=start,
            span_end=cursor,
            importance=row[4],
            label=verdict.label,
            machine_label=verdict.label,
            verdict=verdict.verdict,
            confidence=round(min(max(verdict.confidence, 0.0), 1.0), 6),
            metrics=dict(verdict.metrics),
            methods=verdict.method_names,
            risk_flags=list(verdict.risk_flags),
            method_results={
                m.method: {
                    "ran": m.ran,
                    "score": m.score,
                    "verdict": m.verdict,
                    "flags": list(m.flags),
                    "details": m.details,
                }
                for m in verdict.methods
            },
            drafted_at=created,
            verified_at=created + dt.timedelta(milliseconds=duration),
        )
        for rank, hit in enumerate(verdict.evidence[:3]):
            p = hit.passage
            Evidence.objects.create(
                claim=claim,
                rank=rank,
                source_type="kb",
                source_id=p.id,
                title=p.title,
                uri=p.uri,
                snippet=p.text,
                hash=_sha(p.text),
                relevance=round(min(max(hit.similarity or hit.relevance, 0.0), 1.0), 4),
                entailment=round(min(max(hit.entailment, 0.0), 1.0), 4),
                published_at=p.published,
                retrieved_at=created,
                provenance={"method": "demo_history", "cited": True, "best_sentence": hit.best_sentence},
            )
    share = supported / len(picked)
    VerificationRun.objects.create(
        answer=answer,
        mode=mode,
        started_at=created,
        finished_at=created + dt.timedelta(milliseconds=duration),
        duration_ms=round(duration, 1),
        claim_count=len(picked),
        coverage=round(share, 4),
        unsupported_rate=round(1 - share, 4),
        faithfulness=round(share, 4),
        audit_score=round(sum(v.confidence for _, v, _ in picked) / len(picked), 4),
        answer_relevance=round(rng.uniform(0.7, 0.95), 4),
        context_precision=round(rng.uniform(0.6, 0.9), 4),
        methods=sorted({m for _, v, _ in picked for m in v.method_names}),
    )
    return answer


def _event(case, kind, at, tier, actor=None, reason="", details=None):

    ReviewEvent.objects.create(
        case=case,
        kind=kind,
        tier=tier,
        actor=actor,
        actor_label=actor.get_username() if actor else "system",
        reason=reason,
        details=details or {},
        at=at,
    )
    AuditEvent.objects.create(
        workspace=case.workspace,
        actor=actor,
        at=at,
        action=f"case.{kind}",
        actor_label=actor.get_username() if actor else "system",
        object_type="escalation.reviewcase",
        object_id=str(case.pk),
        details={"ticket": case.ticket, "tier": tier, "demo_history": True},
    )


# long: demo data: one case's life, event after event, in time order
def _live_case(case, rng, reviewers, now, calendar) -> None:
    """Walk a case through a plausible life from its opening time, never past ``now``."""

    t = case.opened_at
    tier, owner = 1, None
    late = rng.random() < 0.15
    ack = t + dt.timedelta(minutes=rng.randint(35, 95) if late else rng.randint(2, 25))
    if ack > now:
        return  # still waiting for its acknowledgement: the sweep keeps its clock
    if late:
        _event(
            case,
            "breached",
            case.due_at,
            1,
            details={"due_at": case.due_at.isoformat(), "clock": "acknowledge"},
        )
    owner = reviewers[1]
    _event(case, "acknowledged", ack, 1, owner, details={"within_sla": not late})
    t = ack
    # acknowledging starts the L1 resolution clock, on track (as case_acknowledge does)
    when = policy.deadlines(1, calendar, start=ack, phase=policy.Phase.RESOLVE)
    last = {"tier": 1, "due_at": when.due_at, "at_risk_at": when.at_risk_at}
    for next_tier in (2, 3):
        if rng.random() >= (0.35 if next_tier == 2 else 0.3):
            break
        t = t + dt.timedelta(minutes=rng.randint(10, 90))
        if t > now:
            break
        when = policy.deadlines(next_tier, calendar, start=t)
        _event(
            case,
            "escalated",
            t,
            next_tier,
            owner,
            reason="Needs a domain expert." if next_tier == 2 else "Disputed: needs the compliance lead.",
            details={"from_tier": tier, "to_tier": next_tier},
        )
        tier, owner = next_tier, reviewers[next_tier]
        last = {"tier": tier, "due_at": when.due_at, "at_risk_at": when.at_risk_at}
        _event(
            case,
            "acknowledged",
            t + dt.timedelta(minutes=rng.randint(5, 40)),
            tier,
            owner,
            details={"within_sla": True},
        )
    budget = policy.sla_budget_seconds(tier, calendar, policy.Phase.RESOLVE)
    slow = rng.random() < 0.12
    work = budget * (rng.uniform(1.1, 1.6) if slow else rng.uniform(0.1, 0.7))
    resolved_at = (
        policy.clock_add(tier, calendar, t, work)
        if tier > 1
        else t + dt.timedelta(minutes=rng.randint(5, 120))
    )
    changes = {
        "tier": tier,
        "owner": owner,
        "acknowledged_at": ack if tier == 1 else t,
        "status": "acknowledged",
        "clock_started_at": t,
        "due_at": last["due_at"],
        "at_risk_at": last["at_risk_at"],
        "sla_state": "on_track",
    }
    if (slow or resolved_at > now) and min(resolved_at, now) > last["due_at"]:
        _event(
            case,
            "breached",
            last["due_at"],
            tier,
            details={"due_at": last["due_at"].isoformat(), "clock": "resolve"},
        )
        changes["sla_state"] = "breached"
    if resolved_at <= now:
        names, weights = zip(*DECISIONS)
        decision = rng.choices(names, weights=weights)[0]
        claim = case.claim
        rationale = {
            "confirm": "The evidence says what the label says.",
            "kb_correction": "The knowledge base is out of date here; correction requested.",
        }.get(decision, "A reviewer read the source and relabelled the claim.")
        # the decision as a labelled example, as case_resolve records it (the reviewer-agreement panel)
        case_decision_example_record(
            claim=claim,
            decision=decision,
            actor=owner,
            rationale=rationale,
            ticket=case.ticket,
            decided_at=resolved_at,
        )
        if decision in RELABEL_DECISIONS and RELABEL_DECISIONS[decision] != claim.label:
            new = RELABEL_DECISIONS[decision]
            claim.label_history = [
                *claim.label_history,
                {
                    "at": resolved_at.isoformat(),
                    "by": owner.get_username(),
                    "by_human": True,
                    "from": claim.label,
                    "to": new,
                    "reason": f"{case.ticket}: {rationale}",
                },
            ]
            claim.label = new
            claim.save(update_fields=["label", "label_history"])
        if decision == "kb_correction":
            closed = resolved_at + dt.timedelta(days=rng.randint(2, 20))
            CurationItem.objects.create(
                workspace=case.workspace,
                source=CurationItem.Source.REVIEW,
                case=case,
                claim=claim,
                reason=rationale,
                created_by=owner,
                created_at=resolved_at,
                **({"status": "done", "closed_at": closed} if closed <= now else {}),
            )
        _event(case, "resolved", resolved_at, tier, owner, reason=rationale, details={"decision": decision})
        changes.update(
            status="resolved",
            resolved_at=resolved_at,
            decision=decision,
            rationale=rationale,
            clock_started_at=None,
            due_at=None,
            at_risk_at=None,
        )
    ReviewCase.objects.filter(pk=case.pk).update(**changes, version=case.version + 1)


def history_seed(
    *, workspace: Workspace, days: int = 30, today: dt.date | None = None, nightly: bool = True, progress=None
) -> HistoryOutcome:
    """Add ``days`` days of history before ``today`` (UTC) to the workspace; days already there are kept."""

    started = time.perf_counter()
    now = timezone.now()
    today = today or now.date()
    wanted = [today - dt.timedelta(days=n) for n in range(days, 0, -1)]
    present = set(
        Answer.objects.filter(
            workspace=workspace, conversation_id__startswith=f"{HISTORY_PREFIX}-"
        ).values_list("conversation_id", flat=True)
    )
    present_days = {cid[len(HISTORY_PREFIX) + 1 : len(HISTORY_PREFIX) + 11] for cid in present}
    todo = [d for d in wanted if d.isoformat() not in present_days]
    answers = claims = cases = reports = 0
    if todo:
        bank, per_claim_ms = _verdicts(workspace)
        if not bank:
            raise ValueError(
                "the knowledge base holds none of the demo documents; run `ingest_kb demo/kb` first"
            )
        reviewers = _reviewers(workspace)
        calendar = esc_selectors.calendar_for_workspace(workspace)
        for i, day in enumerate(todo, start=1):
            rng = random.Random(f"{workspace.slug}:{day.isoformat()}")
            day_start = dt.datetime.combine(day, dt.time.min, tzinfo=dt.timezone.utc)
            with transaction.atomic():
                for number in range(1, rng.randint(5, 9) + 1):
                    answer = _store_answer(workspace, day_start, rng, bank, per_claim_ms, number)
                    answers += 1
                    claims += answer.claims.count()
                    # the cases this answer opened: a claim of an earlier identical answer's case joins
                    # that case (escalation.services.cases_open_for_answer), whose life is already written
                    opened = [
                        c for c in cases_open_for_answer(answer=answer) if c.claim.answer_id == answer.pk
                    ]
                    for case in opened:
                        ReviewCase.objects.filter(pk=case.pk).update(
                            opened_at=answer.created_at, **_l1_clock(case, answer.created_at, calendar)
                        )
                        case.refresh_from_db()
                        case.events.filter(kind="opened").update(at=answer.created_at)
                        _live_case(case, rng, reviewers, now, calendar)
                    # the past is no news: no alert goes out about a history case
                    Notification.objects.filter(event__case__in=opened).delete()
                    cases += len(opened)
            if progress:
                progress(i, len(todo))
    if (
        nightly
    ):  # every wanted day, so a run cut short earlier gets its reports too (a done day is left as it is)
        for day in wanted:
            reports += not nightly_audit_run(workspace=workspace, day=day).already_done
    return HistoryOutcome(
        days_added=len(todo),
        days_present=len(wanted) - len(todo),
        answers=answers,
        claims=claims,
        cases=cases,
        nightly_reports=reports,
        seconds=round(time.perf_counter() - started, 1),
    )


def _l1_clock(case, opened_at, calendar) -> dict:

    when = policy.deadlines(1, calendar, start=opened_at)
    return {"clock_started_at": opened_at, "due_at": when.due_at, "at_risk_at": when.at_risk_at}
