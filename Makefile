# The only commands anyone needs. Each target sets up .venv from nothing first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: site test lint bench golden serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## site: build the example report into site/
site: $(STAMP)
	$(BIN)/reportgen build --config example/reportgen.yaml

## test: run every test
test: $(STAMP)
	$(BIN)/python -m pytest

## lint: ruff and mypy
lint: $(STAMP)
	$(BIN)/ruff check reportgen tests bench
	$(BIN)/ruff format --check reportgen tests bench
	$(BIN)/mypy

## bench: benchmarks (prints a table, writes bench/RESULTS.md)
bench: $(STAMP)
	$(BIN)/python bench/run.py

## golden: refresh the expected example site used by the golden test
golden: $(STAMP)
	$(BIN)/python -m tests.refresh_golden

clean:
	rm -rf $(VENV) site
