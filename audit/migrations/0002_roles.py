"""Create the role groups of audit.roles (idempotent)."""

from django.db import migrations

ROLES = ("L1 analyst", "L2 domain expert", "L3 compliance lead", "Auditor", "Admin", "Submitter")


def create_roles(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLES:
        Group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_roles, migrations.RunPython.noop)]
