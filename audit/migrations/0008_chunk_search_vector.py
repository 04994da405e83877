"""pgvector where PostgreSQL offers it: the extension, ``Chunk.search_vector`` and the search indexes.

On SQLite and on PostgreSQL without the extension, ``search_vector`` is a NULL binary column and
the in-process index stays in use; with the extension it is ``vector(384)`` (filled from
``embedding`` for existing chunks) with an HNSW index, plus ``search_tsv`` with a GIN index.
"""

from django.db import migrations

import audit.kb.pgvector
import audit.models.vector


def create_extension(apps, schema_editor):
    audit.kb.pgvector.create_extension(schema_editor.connection)


def add_search_columns(apps, schema_editor):
    audit.kb.pgvector.add_search_columns(schema_editor.connection)


def drop_search_columns(apps, schema_editor):
    audit.kb.pgvector.drop_search_columns(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("audit", "0007_run_verification_profile"),
    ]

    operations = [
        migrations.RunPython(create_extension, migrations.RunPython.noop),
        migrations.AddField(
            model_name="chunk",
            name="search_vector",
            field=audit.models.vector.VectorField(),
        ),
        migrations.RunPython(add_search_columns, drop_search_columns),
    ]
