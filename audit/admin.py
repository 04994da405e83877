"""Admin console registrations for the audit domain (arranged further by the UI work)."""

from django.contrib import admin

from audit.models import Answer, AuditEvent, Chunk, Claim, Conversation, Document, Evidence, UserProfile, VerificationRun, Workspace


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "default_mode", "retention_days", "allow_external_calls")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("title", "workspace", "domain", "published_at", "sensitive", "updated_at")
    list_filter = ("workspace", "domain", "sensitive")
    search_fields = ("title", "uri")


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ("public_id", "workspace", "mode", "domain", "created_at")
    list_filter = ("mode", "domain")
    search_fields = ("public_id", "query")


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ("__str__", "label", "confidence", "claim_type", "importance")
    list_filter = ("label", "claim_type", "importance")
    list_select_related = ("answer",)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("at", "actor_label", "action", "object_type", "object_id")
    list_filter = ("action",)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


admin.site.register([Chunk, Evidence, VerificationRun, UserProfile, Conversation])
