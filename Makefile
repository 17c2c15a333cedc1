# The only commands anyone needs. Each target sets up .venv from nothing first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
# One worker per core; the tests of a module stay on one worker, so a module's shared
# fixtures (a built site, a browser) are made once.
PYTEST := $(BIN)/python -m pytest -n auto --dist loadscope

.PHONY: site test test-all test-spark lint bench golden serve clean fuzz

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

## site: build the example report into site/
site: $(STAMP)
	$(BIN)/reportgen build --config example/reportgen.yaml

# axe-core for the accessibility tests, pinned in package-lock.json. Without npm (or
# offline) the tests that need it skip, with a message; in CI (CI=true) they must run.
$(NODE_STAMP): package.json package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
	  if [ "$$CI" = true ]; then echo "npm not found (CI=true): install nodejs and npm"; exit 1; fi; \
	  echo "npm not found: skipping axe-core; the accessibility tests will skip"; \
	elif npm ci --no-audit --no-fund; then \
	  touch $(NODE_STAMP); \
	elif [ "$$CI" = true ]; then \
	  exit 1; \
	else \
	  echo "npm ci failed: the accessibility tests will skip"; \
	fi

## test: the fast tier, a few minutes: every test but those marked slow or spark, at a fifth of the Hypothesis budget (the browser tests need Chromium: apt-get install chromium)
test: $(STAMP) $(NODE_STAMP)
	$(PYTEST) -m "not slow and not spark" --hypothesis-profile=dev

## test-all: every test at full budget, the slow and Spark ones too (what .ci/run runs; Spark needs Java 17)
test-all: $(STAMP) $(NODE_STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,spark]'
	$(PYTEST) --hypothesis-profile=ci

## test-spark: the Spark tests alone (installs the spark extra; needs Java 17: apt-get install openjdk-17-jre-headless)
test-spark: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,spark]'
	$(BIN)/python -m pytest -m spark

## lint: ruff and mypy
lint: $(STAMP)
	$(BIN)/ruff check reportgen tests bench
	$(BIN)/ruff format --check reportgen tests bench
	$(BIN)/mypy

## bench: benchmarks (prints tables, writes bench/RESULTS.md, FEEDBACK.md and SCALE.md; Spark's part needs Java)
bench: $(STAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/feedback.py
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,spark]'
	$(BIN)/python bench/scale.py

## fuzz: 10,000 hostile inputs against every reader and command, then longer property tests
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz --cases 10000 --jobs 2
	REPORTGEN_FUZZ=1 $(BIN)/python -m pytest -q tests/test_build_properties.py

## golden: refresh the expected example site used by the golden test
golden: $(STAMP)
	$(BIN)/python -m tests.refresh_golden

clean:
	rm -rf $(VENV) site node_modules test-artifacts
