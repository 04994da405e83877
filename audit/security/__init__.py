"""Who may come in and how often: sign-in (django-axes lockout, progressive delay), the rate
limits shared by the API and the forms (``rates``, ``throttling``) and the middleware that applies
them.

May import: the models, the workspace service (the middleware's workspace switch) and the shared
foundations (``constants``, ``roles``, ``errors``). It never imports selectors, the pipeline, pages
(``audit.web``), the admin or the API (``tests/foundation/test_dependencies.py``).
"""
