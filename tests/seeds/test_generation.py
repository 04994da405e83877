"""Generation modes and verification depth profiles of seed 003: citation keys, then drafting and
verification through the API against the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import pytest

from audit.pipeline.llm.generation import base_key, citation_keys, with_keys
from audit.pipeline.types import Passage
from tests.llm.fake_llm import ok

ARXIV_1 = Passage(
    id="p1",
    title="GLM-4.7 Technical Report",
    uri="https://arxiv.org/abs/2401.00001",
    text="GLM-4.7 scores 85 percent on the reasoning benchmark.",
)
ARXIV_2 = Passage(
    id="p2",
    title="Scaling laws",
    uri="http://export.arxiv.org/abs/2402.00002",
    text="Loss falls as a power law of compute.",
)
REPORT = Passage(id="p3", title="GLM-4.7 Technical Report", text="The report describes the model.")


def test_keys_come_from_the_web_domain_then_the_title_with_numbered_collisions():
    assert citation_keys([ARXIV_1, ARXIV_2, REPORT]) == ["Arxiv", "Arxiv-2", "GLM47"]
    assert base_key(Passage(id="x", text="", uri="https://pubmed.ncbi.nlm.nih.gov/1")) == "Nih"
    assert base_key(Passage(id="x", text="", title="The Hippocampus")) == "Hippocampus"
    assert base_key(Passage(id="x", text="", title="42")) == "Source"
    assert citation_keys([REPORT, REPORT, REPORT]) == ["GLM47", "GLM47-2", "GLM47-3"]


def test_markers_become_keys_the_passages_answer_to_or_links_in_classical_mode():
    text, passages, keys = with_keys("A [1]. B [2][3].", [ARXIV_1, ARXIV_2, REPORT], "strict")

    assert text == "A [Arxiv]. B [Arxiv-2][GLM47]."
    assert keys == {"Arxiv": "p1", "Arxiv-2": "p2", "GLM47": "p3"}
    assert [p.anchors for p in passages] == [("Arxiv",), ("Arxiv-2",), ("GLM47",)]
    classical, keyed, only_report = with_keys("A [1]. B [3].", [ARXIV_1, ARXIV_2, REPORT], "classical")
    # a passage with a URL is a link; one without is cited by its key (a citation, not a bare title)
    assert classical == "A [GLM-4.7 Technical Report](https://arxiv.org/abs/2401.00001). B [GLM47]."
    assert only_report == {"GLM47": "p3"} and keyed[2].anchors == ("GLM47",) and keyed[0].anchors == ()


def test_a_classical_link_title_never_leaks_into_the_claim_text():
    from audit.pipeline.extraction import extract_claims

    text, _, _ = with_keys(
        "GLM-4.7 does well on reasoning [1]. It is described [3].", [ARXIV_1, REPORT, REPORT], "classical"
    )
    claims = extract_claims(text, QUERY)
    assert [c.text for c in claims] == ["GLM-4.7 does well on reasoning.", "It is described."]
    assert claims[1].citations == ("GLM47-2",)
    # a link inside the sentence is its words, as before
    [inline] = extract_claims("The [technical report](https://arxiv.org/abs/1) describes GLM-4.7.", QUERY)
    assert inline.text == "The technical report describes GLM-4.7."


# --- through the API, against the scripted LLM server -------------------------------------------

CONTEXTS = [{"id": p.id, "title": p.title, "uri": p.uri, "text": p.text} for p in (ARXIV_1, ARXIV_2, REPORT)]
QUERY = "How does GLM-4.7 do on reasoning?"


@pytest.fixture
def front_end(client_for, submitter, workspace, settings, llm_server):
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": llm_server.base_url,
        "LLM_MODEL": "test-model",
        "LLM_TIMEOUT_S": 2.0,
        "LLM_MAX_RETRIES": 0,
    }
    workspace.allow_external_calls = False  # the loopback LLM is inside residency; no web
    workspace.save(update_fields=["allow_external_calls"])
    return client_for(submitter)


def submit(client, **body):
    response = client.post(
        "/api/v1/audits", {"query": QUERY, "contexts": CONTEXTS, "mode": "normal", **body}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()


def test_a_strict_draft_cites_with_human_readable_keys_that_resolve(front_end, llm_server):
    llm_server.route(
        ("TASK: draft_answer", "MODE: strict"),
        ok("GLM-4.7 scores 85 percent on the reasoning benchmark [1][3]. Loss follows compute [2]."),
    )

    data = submit(front_end, generation_mode="strict")

    assert data["answer"] == (
        "GLM-4.7 scores 85 percent on the reasoning benchmark [Arxiv][GLM47]. Loss follows compute [Arxiv-2]."
    )
    assert data["drafted"]["generation_mode"] == "strict" and data["drafted"]["method"] == "llm_draft"
    assert data["drafted"]["citation_keys"] == {"Arxiv": "p1", "GLM47": "p3", "Arxiv-2": "p2"}
    assert [(c["anchor"], c["id"]) for c in data["citations"]] == [
        ("Arxiv", "p1"),
        ("GLM47", "p3"),
        ("Arxiv-2", "p2"),
    ]
    [call] = llm_server.calls("TASK: draft_answer")
    assert "MODE: strict" in call["body"]["messages"][0]["content"]


def test_the_workspace_generation_mode_applies_when_the_request_names_none(
    front_end, llm_server, client_for, admin_user_obj
):
    client_for(admin_user_obj).put(
        "/api/v1/settings/thresholds",
        {"threshold_overrides": {"generation_mode": "classical"}},
        format="json",
    )
    llm_server.route(("TASK: draft_answer", "MODE: classical"), ok("GLM-4.7 does well on reasoning [1]."))

    data = submit(front_end)

    assert (
        data["answer"]
        == "GLM-4.7 does well on reasoning [GLM-4.7 Technical Report](https://arxiv.org/abs/2401.00001)."
    )
    assert data["drafted"]["generation_mode"] == "classical"


def test_natural_is_the_default_and_the_offline_draft_gets_keys_too(front_end, llm_server):
    # the draft route is not scripted: the server answers 500 and the offline extractive draft is used
    data = submit(front_end)

    assert data["drafted"]["generation_mode"] == "natural" and data["drafted"]["method"] == "extractive_draft"
    assert "[Arxiv]" in data["answer"] and "[1]" not in data["answer"]
    assert "MODE: natural" in llm_server.calls("TASK: draft_answer")[0]["body"]["messages"][0]["content"]


@pytest.mark.slow
def test_the_light_profile_runs_fast_offline_without_numeric_qa_revision_or_llm_methods(
    front_end, llm_server, embedder, client_for, auditor
):
    answer = "GLM-4.7 scores 97 percent on the reasoning benchmark [1]."

    data = submit(front_end, answer=answer, mode="audit-local", verification_profile="light")

    assert data["audit"]["verification_profile"] == "light"
    assert data["original_answer"] == data["answer"] and "revisions" not in data  # no revision loop
    methods = {m for c in data["claims"] for m in c["verification_methods"]}
    assert "numeric" not in methods and "entailment" in methods
    not_run = {
        w["method"]: w["message"] for w in data["audit"]["warnings"] if w.get("code") == "method_not_run"
    }
    assert not_run["numeric"] == not_run["llm_judge"] == "left out by the light verification profile"
    assert llm_server.requests == []  # no LLM extraction, judge, CoVe or SelfCheck


@pytest.mark.slow
def test_the_medium_profile_runs_numeric_qa_and_the_workspace_profile_applies(
    front_end, llm_server, embedder, client_for, admin_user_obj
):
    client_for(admin_user_obj).put(
        "/api/v1/settings/thresholds",
        {"threshold_overrides": {"verification_profile": "medium"}},
        format="json",
    )
    answer = "GLM-4.7 scores 97 percent on the reasoning benchmark [1]."

    data = submit(front_end, answer=answer, mode="audit-local")

    assert data["audit"]["verification_profile"] == "medium"
    # numeric QA found 97 against the passage's 85 and the revision loop (one round at most) corrected it
    assert (
        data["original_answer"] == answer and "85 percent" in data["answer"] and len(data["revisions"]) == 1
    )
    assert all("numeric" in c["verification_methods"] for c in data["claims"])


def test_an_extended_workspace_drafts_strictly_unless_the_request_says_otherwise(
    front_end, llm_server, client_for, admin_user_obj
):
    client_for(admin_user_obj).put(
        "/api/v1/settings/thresholds",
        {"threshold_overrides": {"verification_profile": "extended"}},
        format="json",
    )
    llm_server.route("TASK: draft_answer", ok("GLM-4.7 scores 85 percent [1]."))

    assert submit(front_end)["drafted"]["generation_mode"] == "strict"
    assert submit(front_end, generation_mode="natural")["drafted"]["generation_mode"] == "natural"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"generation_mode": "poetic"}, "generation_mode"),
        ({"verification_profile": "deep"}, "verification_profile"),
    ],
)
def test_an_unknown_mode_or_profile_is_a_400_naming_it(front_end, body, field):
    response = front_end.post("/api/v1/audits", {"query": QUERY, "answer": "x", **body}, format="json")

    assert response.status_code == 400 and field in response.json()["errors"]


@pytest.mark.parametrize("name", ["verification_profile", "generation_mode"])
def test_an_unknown_workspace_mode_or_profile_is_a_400_naming_it(client_for, admin_user_obj, name):
    response = client_for(admin_user_obj).put(
        "/api/v1/settings/thresholds", {"threshold_overrides": {name: "deep"}}, format="json"
    )

    assert response.status_code == 400 and f"threshold_overrides.{name}" in response.json()["errors"]


def test_profiles_map_onto_the_existing_depth_method_and_revision_settings():
    from audit.constants import Thresholds
    from audit.pipeline.profiles import verification_plan

    workspace = Thresholds().updated({"max_revisions": 3})
    light, medium, extended = (verification_plan(workspace, name) for name in ("light", "medium", "extended"))
    none = verification_plan(workspace)

    assert (light.thresholds.verification_depth, light.thresholds.max_revisions, light.revise) == (
        "fast",
        0,
        False,
    )
    assert "numeric" not in light.methods and not light.llm_methods and not light.web
    assert (
        medium.thresholds.verification_depth,
        medium.thresholds.max_revisions,
        "numeric" in medium.methods,
    ) == ("full", 1, True)
    assert (extended.thresholds.max_revisions, extended.generation_mode, extended.llm_methods) == (
        3,
        "strict",
        True,
    )
    assert (none.profile, none.thresholds, none.generation_mode) == ("", workspace, "natural")
    assert verification_plan(Thresholds().updated({"verification_profile": "light"})).profile == "light"
