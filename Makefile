# make demo: install everything into .venv and run a real experiment through the local state machine.
# make test: install what the tests need and run the whole suite.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

.PHONY: demo test lint bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.local-installed: $(BIN)/python pyproject.toml requirements.txt
	$(BIN)/pip install --quiet -e ".[local]"
	touch $@

$(VENV)/.test-installed: $(VENV)/.local-installed
	$(BIN)/pip install --quiet -e ".[local,test]"
	touch $@

demo: $(VENV)/.local-installed
	$(BIN)/oriole run --maze perfect-11 --agent explorer

test: $(VENV)/.test-installed
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

bench: $(VENV)/.local-installed
	$(BIN)/python bench/bench_local_run.py
