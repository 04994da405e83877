"""Evaluation and benchmark tooling: measuring the pipeline, never part of an audit.

The management commands (``evaluate``, ``evaluate_revision``, ``fit_entailment``,
``fit_learned_judge``, ``bench``, ``verify_claims``, ``verify_answers``, ``nightly_audit --bench``)
import from here. ``cli``, ``bench_data``, ``bench_eval``, ``entailment_fit``, ``learned_fit`` and
``revision_eval`` are plain Python like the pipeline they measure; ``nightly_bench`` and
``bench_pgvector`` use the database. Benchmark data: ``bench_data.BENCHMARKS_DIR``
(``THEORIA_BENCHMARKS_DIR``); accuracy is tuned on DEV only.

May import: ``audit.pipeline``, and (for the database benchmarks only) the models, ``audit.kb`` and
services. No verification path imports it: services, selectors, the pages and the API never do.
"""
