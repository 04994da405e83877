"""The DRF API the front end calls (``/api/v1/``): views, serializers, permissions, throttles and the
OpenAPI schema. Views stay thin: they parse, call a service or a selector, and serialise.

May import: services, selectors, ``audit.security`` (throttles, token sign-in), ``audit.web``'s
filters and exports (shared with the pages), the models and the shared foundations. Nothing below
the pages imports it (``tests/foundation/test_dependencies.py``).
"""
