"""The admin console's settings page of one workspace: modes and every threshold as a named, typed field.

Each field shows the value in force, its unit and the default (``audit.constants``). A
value left at its default is no override; every field is checked at once (the form's own
checks and the range check of every threshold), so a page with three bad values names all three; the overrides are checked by the API's check
(``audit.services.modes.thresholds_check``) and stored by the same services as the API
(``thresholds_set``, ``workspace_settings_update``), so every change is an audit event.
"""

from __future__ import annotations

from django import forms

from audit import constants
from audit.models.choices import CitationOnlyRevisions, Mode, RevisionApproval

# name -> (label, unit) of each threshold on the page; the values themselves live in audit.constants.
THRESHOLD_LABELS = {
    "audit_score_threshold": ("Audit score needed to pass", "score 0–1"),
    "selfcheck_disagreement_threshold": ("Self-check disagreement that escalates", "share 0–1"),
    "low_confidence_threshold": ("Confidence below which REFUTED/NEI claims go to people", "confidence 0–1"),
    "coverage_threshold": ("Evidence coverage gate", "share 0–1"),
    "unsupported_rate_threshold": ("Unsupported-claim rate gate", "share 0–1"),
    "max_revisions": ("Revision attempts", "attempts"),
    "similarity_threshold": ("Similarity for a passage to count", "cosine 0–1"),
    "weak_threshold": ("Confidence of a weak verdict", "confidence 0–1"),
    "refuted_threshold": ("Contradiction probability for REFUTED", "probability 0–1"),
    "conflict_threshold": ("Disagreement between sources that flags a conflict", "score 0–1"),
    "numeric_boost": ("Retrieval boost for passages with the claim's numbers", "score"),
    "numeric_rel_tolerance": ("Relative tolerance of an exact number", "fraction"),
    "numeric_approx_tolerance": ("Relative tolerance of an 'about' number", "fraction"),
    "retrieval_top_k": ("Passages retrieved per claim", "passages"),
    "verification_depth": ("Verification depth", "fast or full"),
    "judge": ("Entailment judge", "judge"),
    "strictness": (
        "Strictness (the judge's operating point)",
        "point; DEV catch rate and review load beside",
    ),
    "verification_profile": ("Verification profile", "profile"),
    "generation_mode": ("Generation mode", "mode"),
    "freshness_months": ("Freshness limit of", "months"),
    "fallback_freshness_months": ("Freshness limit of other domains", "months"),
    "audit_score_weights": ("Audit score weight of", "weight"),
    "rag_score_weights": ("RAG score weight of", "weight"),
    "sla_at_risk_share": ("Share of an SLA after which a case is at risk", "share 0–1"),
    "max_claims_per_answer": ("Most claims in one answer", "claims"),
    "deep_checks": ("When the LLM methods (deep checks) run", "sync or async"),
    "auto_corrected_review": ("Which corrected claims a person confirms", "all or material"),
}
# what a setting does, where its label and unit do not say it (appended to its help text)
THRESHOLD_HELP = {
    "max_claims_per_answer": "An answer with more claims is refused (HTTP 413) before any verification.",
    "deep_checks": "sync: inside the request, within its time budget; async: the offline result is "
    "answered at once and the LLM judge, CoVe and SelfCheck relabel the claims afterwards.",
    "auto_corrected_review": "Claims refuted as received that the revision loop corrected. all: a person "
    "confirms every correction; material: minor claims whose correction verified SUPPORTED are spared.",
    "max_revisions": "How many times the revision loop may rewrite an answer that fails a gate.",
    "verification_depth": "fast: the offline judge only; full: every configured method.",
}


def _field_for(default, label: str, help_text: str, choices=None, bounds: tuple[int, int] | None = None):
    if choices is not None:
        return forms.ChoiceField(
            label=label,
            help_text=help_text,
            required=False,
            choices=[("", "(none)")] * (default == "") + [(c, c) for c in choices],
        )
    if isinstance(default, bool):
        return forms.BooleanField(label=label, help_text=help_text, required=False)
    if isinstance(default, int):
        low, high = bounds or (None, None)
        out_of_range = f"Must be between {low} and {high}." if bounds else None
        return forms.IntegerField(
            label=label,
            help_text=help_text,
            required=True,
            min_value=low,
            max_value=high,
            error_messages={"min_value": out_of_range, "max_value": out_of_range} if bounds else None,
        )
    return forms.FloatField(label=label, help_text=help_text, required=True)


class WorkspaceSettingsForm(forms.Form):
    """Modes, web switch and one typed field per threshold (dict thresholds: one field per key)."""

    default_mode = forms.ChoiceField(
        label="Default mode", choices=Mode.choices, help_text="Users and conversations may override it."
    )
    allow_external_calls = forms.BooleanField(
        label="Allow external calls (Audit-Web, LLM outside residency)", required=False
    )
    revision_approval = forms.ChoiceField(
        label="Revised answers",
        choices=RevisionApproval.choices,
        help_text="Served at once, or held as a proposal until a reviewer accepts or rejects it.",
    )
    regulated_domains = forms.CharField(
        label="Regulated domains",
        required=False,
        max_length=2000,
        help_text="Comma-separated domain tags. Answers in them are always audited and escalated, run "
        "the regulated strictness, and their revisions are held when revised answers are held in "
        "regulated domains.",
    )
    free_text_domains = forms.BooleanField(
        label="Any domain may be typed on the answer form",
        required=False,
        help_text="Off: the answer form offers the workspace's own domains (the regulated ones, the "
        "freshness policy's and those of its answers) and takes no other; on: any domain may be typed.",
    )
    revision_approval_domains = forms.CharField(
        label="Hold revisions in these domains instead",
        required=False,
        max_length=2000,
        help_text="Comma-separated domain tags, used only when revised answers are held in regulated "
        "domains: set, revisions are held in these domains (regulated or not) and nowhere else; "
        "empty, in every regulated domain.",
    )

    citation_only_revisions = forms.ChoiceField(
        label="Revisions that change only citations",
        choices=CitationOnlyRevisions.choices,
        help_text="Where revisions are held: served without approval (marked “served without approval: "
        "citations only”) or held like any other.",
    )

    def __init__(self, *args, workspace, **kwargs):
        self.workspace = workspace
        self.defaults = constants.Thresholds()
        current = self.defaults.updated(workspace.threshold_overrides or {})
        initial = {
            "default_mode": workspace.default_mode,
            "allow_external_calls": workspace.allow_external_calls,
            "revision_approval": workspace.revision_approval,
            "regulated_domains": ", ".join(workspace.regulated_domains or []),
            "free_text_domains": workspace.free_text_domains,
            "revision_approval_domains": ", ".join(workspace.revision_approval_domains or []),
            "citation_only_revisions": workspace.citation_only_revisions,
        }
        super().__init__(*args, initial=initial, **kwargs)
        self.threshold_names: list[str] = []  # form field names, in order
        self.keys: dict[str, tuple[str, str | None]] = {}  # form field -> (threshold, dict key or None)
        for f in constants.setting_fields():
            label, unit = THRESHOLD_LABELS.get(f.name, (f.name.replace("_", " "), ""))
            default = getattr(self.defaults, f.name)
            value = getattr(current, f.name)
            if isinstance(default, dict):
                for key in sorted(value):
                    name = f"t__{f.name}__{key}"
                    seed = default.get(key)
                    self.fields[name] = _field_for(
                        0.0 if isinstance(value[key], float) else 0,
                        f"{label} {key}",
                        f"{unit}; default {seed if seed is not None else 'none'}",
                        bounds=None if f.name.endswith("_weights") else constants.FRESHNESS_MONTHS_RANGE,
                    )
                    self.initial[name] = value[key]
                    self.threshold_names.append(name)
                    self.keys[name] = (f.name, key)
                continue
            name = f"t__{f.name}"
            extra = f". {THRESHOLD_HELP[f.name]}" if f.name in THRESHOLD_HELP else ""
            self.fields[name] = _field_for(
                default,
                label,
                f"{unit}; default {default if default != '' else '(none)'}{extra}",
                constants.STRING_THRESHOLDS.get(f.name),
                bounds=constants.INT_THRESHOLD_RANGES.get(f.name),
            )
            self.initial[name] = value
            self.threshold_names.append(name)
            self.keys[name] = (f.name, None)

        if "t__strictness" in self.fields:
            self.fields["t__strictness"].choices = strictness_choices(self.workspace, current)
        self.operating_points = operating_point_rows(current)

    def threshold_fields(self):
        return [self[name] for name in self.threshold_names]

    def _domains(self, name: str) -> list[str]:
        raw = self.cleaned_data.get(name) or ""
        return sorted({d.strip().lower() for d in raw.split(",") if d.strip()})

    def clean_revision_approval_domains(self) -> list[str]:
        return self._domains("revision_approval_domains")

    def clean_regulated_domains(self) -> list[str]:
        return self._domains("regulated_domains")

    def held_now(self) -> str:
        """Where revisions are held now, in words (the two domain lists read together)."""
        ws = self.workspace
        if ws.revision_approval == RevisionApproval.ALL:
            return "every revised answer is held"
        if ws.revision_approval != RevisionApproval.REGULATED:
            return "no revision is held: revised answers are served at once"
        if ws.revision_approval_domains:
            return "revisions are held in " + ", ".join(ws.revision_approval_domains) + " (set below)"
        if ws.regulated_domains:
            return "revisions are held in the regulated domains: " + ", ".join(ws.regulated_domains)
        return "no revision is held yet: no regulated domain is set"

    def clean(self):
        """Check every threshold that parsed against its range, so all bad values are named at once."""
        data = super().clean()
        for name, (threshold, key) in self.keys.items():
            value = data.get(name)
            if value in (None, "") or name in self.errors:
                continue
            problem = constants.threshold_problem(threshold, {key: value} if key else value)
            if problem:
                self.add_error(name, problem[1][:1].upper() + problem[1][1:])
        return data

    def overrides(self) -> dict:
        """The threshold overrides of a valid form: every value that differs from its default."""
        out: dict = {}
        for name, (threshold, key) in self.keys.items():
            value = self.cleaned_data.get(name)
            default = getattr(self.defaults, threshold)
            if key is None:
                if value in (None, "") or value == default:
                    continue
                out[threshold] = value
            elif value is not None and value != default.get(key):
                out.setdefault(threshold, {})[key] = value
        return out

    def add_service_error(self, field: str, message: str) -> None:
        """Attach an InvalidInput naming ``threshold_overrides.<name>[.<key>]`` to its field."""
        parts = field.split(".")[1:] if field.startswith("threshold_overrides.") else []
        name = "t__" + "__".join(parts) if parts else None
        self.add_error(name if name in self.fields else None, message)


def _point_figures(row: dict) -> str:
    return f"catches {100 * row['catch']:.1f} % on DEV, review load {100 * row['review_load']:.1f} %"


def strictness_choices(workspace, thresholds: constants.Thresholds) -> list[tuple[str, str]]:
    """The strictness choices, each with its DEV catch rate and review load at the workspace's
    verification depth (``operating_points.json``; nothing is run), and the empty choice saying what
    the default is here."""
    from audit.pipeline.operating_points import shipped_operating_points

    points = shipped_operating_points()
    rows = points.at_depth(thresholds.verification_depth)[0] if points is not None else {}
    regulated = ", ".join(workspace.regulated_domains or []) or "none set"
    out = [
        (
            "",
            f"(default: {constants.STRICTNESS_DEFAULT}; {constants.STRICTNESS_REGULATED} in the regulated "
            f"domains: {regulated})",
        )
    ]
    for name in constants.STRICTNESS_POINTS:
        row = rows.get(name)
        out.append((name, f"{name} — {_point_figures(row)}" if row else name))
    return out


def operating_point_rows(thresholds: constants.Thresholds) -> list[dict]:
    """The table beside the strictness: each point's cut and DEV figures, and whether it is the workspace's
    choice (``in_force``) or the default of its regulated domains (``regulated_default``)."""
    from audit.pipeline.operating_points import resolve_strictness, shipped_operating_points

    points = shipped_operating_points()
    if points is None:
        return []
    chosen = resolve_strictness(thresholds.strictness)
    rows, command, version = points.at_depth(thresholds.verification_depth)
    return [
        {
            "name": name,
            **{k: 100 * float(v) for k, v in row.items() if k in ("catch", "false_alarm", "review_load")},
            "cut": row["cut"],
            "interval": [100 * float(v) for v in row.get("catch_interval", [])],
            "in_force": name == chosen,
            "regulated_default": not thresholds.strictness and name == constants.STRICTNESS_REGULATED,
            "command": command,
            "judge_version": version,
            "depth": thresholds.verification_depth,
        }
        for name, row in ((n, rows.get(n)) for n in constants.STRICTNESS_POINTS)
        if row
    ]
