"""Row-by-row updates of many model instances in one round of ``executemany``.

Django's ``bulk_update`` writes one ``UPDATE ... SET f = CASE WHEN id = 1 THEN ... END`` per
batch; compiling and evaluating those CASE expressions cost the nightly auditor about 3 s per
1,000 claims (measured with cProfile on SQLite). One parameterised ``UPDATE ... WHERE id = %s``
sent through ``executemany`` does the same work in a fraction of that on SQLite and PostgreSQL.
Values go through each field's ``get_db_prep_save`` (JSON, dates), like ``save()``.
"""

from __future__ import annotations

from django.db import connections, router


def rows_update(objs: list, fields: list[str]) -> int:
    """Write ``fields`` of every instance in ``objs`` (all of one model) by primary key; return the count."""
    if not objs:
        return 0
    model = type(objs[0])
    db = router.db_for_write(model)
    connection = connections[db]
    meta = model._meta
    model_fields = [meta.get_field(name) for name in fields]
    qn = connection.ops.quote_name
    sql = (
        f"UPDATE {qn(meta.db_table)} SET "
        + ", ".join(f"{qn(f.column)} = %s" for f in model_fields)
        + f" WHERE {qn(meta.pk.column)} = %s"
    )
    params = [
        [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in model_fields] + [obj.pk]
        for obj in objs
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)
    return len(params)
