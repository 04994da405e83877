"""``search_text`` on answers and claims: the searched fields with accents and case folded
(``audit.pipeline.text.fold``), so "lomo" finds "Lømo" on SQLite and PostgreSQL alike.

Existing rows are filled here. On PostgreSQL a GIN index on the column's English text-search
vector serves the full-text search (the same expression ``audit.web.filters.text_search`` queries).
"""

from django.db import migrations, models

from audit.pipeline.text import fold

SOURCES = {"Answer": ("query", "original_text", "text"), "Claim": ("text",)}
TABLES = {"audit_answer": "audit_answer_search_fold", "audit_claim": "audit_claim_search_fold"}


def fill(apps, schema_editor):
    for name, fields in SOURCES.items():
        model = apps.get_model("audit", name)
        batch = []
        for row in model.objects.only("id", *fields).iterator(chunk_size=2000):
            row.search_text = fold("\n".join(getattr(row, f) or "" for f in fields))
            batch.append(row)
            if len(batch) >= 2000:
                model.objects.bulk_update(batch, ["search_text"])
                batch = []
        if batch:
            model.objects.bulk_update(batch, ["search_text"])


def add_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, index in TABLES.items():
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {index} ON {table} "
            "USING gin (to_tsvector('english'::regconfig, COALESCE(search_text, '')))"
        )


def drop_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for index in TABLES.values():
        schema_editor.execute(f"DROP INDEX IF EXISTS {index}")


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0013_answer_revision_approval"),
    ]

    operations = [
        migrations.AddField(
            model_name="answer",
            name="search_text",
            field=models.TextField(
                blank=True,
                default="",
                editable=False,
                help_text="The searched fields, accents and case folded.",
            ),
        ),
        migrations.AddField(
            model_name="claim",
            name="search_text",
            field=models.TextField(
                blank=True,
                default="",
                editable=False,
                help_text="The searched fields, accents and case folded.",
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.RunPython(add_indexes, drop_indexes),
    ]
