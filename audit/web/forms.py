"""Forms of the analyst pages: they check shape only (business rules live in services)."""

from __future__ import annotations

from django import forms

from audit.models.choices import Mode
from audit.services.submissions import AuditRequest


class DateRangeForm(forms.Form):
    """The date range of the dashboard (both ends inclusive; defaults applied by the view)."""

    date_from = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label="To", widget=forms.DateInput(attrs={"type": "date"}))
    domain = forms.CharField(required=False, label="Domain", max_length=64)

    def clean(self):
        data = super().clean()
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.add_error("date_to", "must not be before From: the range was not applied.")
        return data


def form_errors_text(form: forms.Form) -> str:
    """Return the form's errors as one sentence per field, naming the field."""
    return " ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


def mark_invalid(form: forms.Form) -> forms.Form:
    """Give every field with an error ``aria-invalid`` and ``aria-describedby`` (its message's id,
    ``<field id>-error``, which the template puts beside it); return the form."""
    for name in form.errors:
        if name in form.fields:
            attrs = form.fields[name].widget.attrs
            attrs["aria-invalid"] = "true"
            attrs["aria-describedby"] = f"{form[name].auto_id}-error"
    return form


def error_summary(form: forms.Form, prefix: str = "") -> list[dict]:
    """The error summary's lines of a form: each message with the id of its field (none for the form's own)."""
    lines = [{"id": "", "text": f"{prefix}{e}"} for e in form.non_field_errors()]
    for field in form:
        lines += [{"id": field.auto_id, "text": f"{prefix}{field.label}: {e}"} for e in field.errors]
    return lines


class AnswerSubmitForm(forms.Form):
    """An answer submitted from the browser: the same fields as ``POST /api/v1/audits``."""

    query = forms.CharField(
        label="Question",
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": "Write the question the answer replies to."},
    )
    answer = forms.CharField(
        label="Answer",
        strip=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        error_messages={"required": "Paste the answer to audit."},
    )
    mode = forms.ChoiceField(label="Mode", required=False)
    domain = forms.CharField(
        label="Domain",
        required=False,
        max_length=64,
        help_text="e.g. neuroscience or compliance (sets freshness limits and regulated-domain rules)",
    )

    def __init__(
        self,
        *args,
        default_mode_label: str = "",
        domains: list[str] | None = None,
        free_text_domains: bool = True,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        default = f"Workspace default ({default_mode_label})" if default_mode_label else "Workspace default"
        self.fields["mode"].choices = [("", default), *Mode.choices]
        self.domains = domains or []
        if not free_text_domains:  # the workspace's own list only (Workspace.free_text_domains)
            self.fields["domain"] = forms.ChoiceField(
                label="Domain",
                required=False,
                choices=[("", "No domain"), *((d, d) for d in self.domains)],
                help_text="One of this workspace's domains (sets freshness limits and regulated-domain "
                "rules); an admin may allow any domain in the workspace's settings.",
                error_messages={"invalid_choice": "%(value)s is not one of this workspace's domains."},
            )
        elif self.domains:  # free text, with the workspace's domains suggested
            self.fields["domain"].widget.attrs["list"] = "domain-choices"

    def clean_answer(self):
        if not self.cleaned_data["answer"].strip():
            raise forms.ValidationError("Paste the answer to audit.")
        return self.cleaned_data["answer"]


class PassageForm(forms.Form):
    """One passage sent with the answer; a block left empty is skipped."""

    title = forms.CharField(required=False, max_length=500)
    uri = forms.CharField(required=False, max_length=2000, label="URI")
    published_at = forms.DateField(
        required=False, label="Date", widget=forms.DateInput(attrs={"type": "date"})
    )
    text = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean(self):
        data = super().clean()
        filled = (
            any(data.get(k) for k in ("title", "uri", "published_at")) or (data.get("text") or "").strip()
        )
        if filled and not (data.get("text") or "").strip():
            self.add_error("text", "A passage needs its text (or clear its title, URI and date).")
        return data


PassageFormSet = forms.formset_factory(PassageForm, extra=2, max_num=50, validate_max=True)


def audit_request_of(form: AnswerSubmitForm, passages) -> AuditRequest:
    """Return the service's request (the one ``POST /api/v1/audits`` builds) of a valid submit form
    and passage formset; ``audit_submit`` checks it as it checks the API's.

    Passages are numbered 1, 2, ... in order, so ``[1]`` in the answer cites the first block.
    """
    contexts = []
    for block in passages.cleaned_data:
        if not (block.get("text") or "").strip():
            continue
        context = {"id": str(len(contexts) + 1), "text": block["text"]}
        for key in ("title", "uri"):
            if block.get(key):
                context[key] = block[key].strip()
        published = block.get("published_at")
        context["published_at"] = published.isoformat() if published else None
        contexts.append(context)
    data = form.cleaned_data
    return AuditRequest(
        query=data["query"],
        answer=data["answer"],
        contexts=contexts,
        mode=(data.get("mode") or "").strip(),
        domain=(data.get("domain") or "").strip(),
    )


class RevisionDecisionForm(forms.Form):
    """A person's decision on a held revision: accept or reject, and why (both required)."""

    decision = forms.ChoiceField(
        choices=[("accept", "Accept"), ("reject", "Reject")],
        error_messages={
            "required": "Choose Accept or Reject.",
            "invalid_choice": "Choose Accept or Reject.",
        },
    )
    reason = forms.CharField(
        max_length=2000,
        error_messages={"required": "Say why: the reason is recorded in the audit trail."},
    )
