"""The knowledge base's search back ends: the portable hybrid index (``search``) and pgvector
(``pgvector``: the vector field, its extension and HNSW index, the search in SQL).

May import: the models, ``audit.pipeline`` and the shared foundations (``constants``). It never
imports services, selectors, pages (``audit.web``), the admin or the API
(``tests/foundation/test_dependencies.py``).
"""
