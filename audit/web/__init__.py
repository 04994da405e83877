"""The analyst's pages: views, forms, list filters, charts, drill-downs, presentation helpers, the
dashboard cache and the card exports they stream. The pages never import the API
(``audit.api``): the answer form builds the service's request itself (``audit_submit`` checks it).

May import: ``audit.services``, ``audit.selectors``, ``audit.pipeline`` (pure helpers), ``audit.kb``,
``audit.security``, ``audit.cards`` (the Claim Card, the API's too), the models and the shared foundations (``constants``, ``roles``, ``errors``,
``hooks``). Nothing below the pages imports it: services, selectors, the pipeline, ``kb`` and
``security`` never import ``audit.web`` (``tests/foundation/test_dependencies.py``).
"""
