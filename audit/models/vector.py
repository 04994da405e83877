"""The vector column of knowledge-base chunks and the per-database checks it needs.

``Chunk.search_vector`` is a ``vector(384)`` column where PostgreSQL has the pgvector extension
and a NULL binary column elsewhere; whether a database has it is asked once and kept
(:func:`extension_installed`, :func:`pgvector_ready`). The search over that column lives in
``audit.kb.pgvector``, which builds on this module (models stay below the knowledge base).
"""

from __future__ import annotations

import numpy as np
from django.db import connection as default_connection
from django.db import models

from audit.constants import EMBEDDING_DIM

_extension: dict[tuple, bool] = {}
_ready: dict[tuple, bool] = {}


def _key(connection) -> tuple:
    s = connection.settings_dict
    return connection.alias, s.get("NAME"), s.get("HOST"), s.get("PORT")


def extension_installed(connection) -> bool:
    """Whether the ``vector`` extension is installed in this PostgreSQL database (cached)."""
    if connection.vendor != "postgresql":
        return False
    key = _key(connection)
    if key not in _extension:
        with connection.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
            _extension[key] = cur.fetchone() is not None
    return _extension[key]


def pgvector_ready(connection=None) -> bool:
    """Whether search runs in this database: ``audit_chunk.search_vector`` is a pgvector column (cached)."""
    connection = connection or default_connection
    if connection.vendor != "postgresql":
        return False
    key = _key(connection)
    if key not in _ready:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT udt_name FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = 'audit_chunk' AND column_name = 'search_vector'"
            )
            row = cur.fetchone()
            _ready[key] = bool(row and row[0] == "vector")
    return _ready[key]


def forget_backend_checks() -> None:
    _extension.clear()
    _ready.clear()


def vector_literal(vec) -> str:
    return "[" + ",".join(map(repr, np.asarray(vec, dtype=np.float32).tolist())) + "]"


class VectorField(models.Field):
    """An embedding kept for in-database search: ``vector(384)`` where PostgreSQL has pgvector.

    Elsewhere the column is a NULL binary column (the in-process index reads ``Chunk.embedding``),
    so writers may always pass the vector. Reads give a float32 array, or None.
    """

    description = "pgvector embedding (NULL without pgvector)"

    def __init__(self, *args, dimensions: int = EMBEDDING_DIM, **kwargs):
        self.dimensions = dimensions
        kwargs["null"] = True
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("null", None)
        kwargs.pop("editable", None)
        if self.dimensions != EMBEDDING_DIM:
            kwargs["dimensions"] = self.dimensions
        return name, path, args, kwargs

    def db_type(self, connection):
        if extension_installed(connection):
            return f"vector({self.dimensions})"
        return models.BinaryField().db_type(connection)

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None or not pgvector_ready(connection):
            return None
        return vector_literal(value)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if isinstance(value, str):
            return np.array(value.strip("[]").split(","), dtype=np.float32)
        return None
