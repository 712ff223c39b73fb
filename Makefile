# Two entry points a fresh machine needs (Python 3.11 + make):
#   make demo   -> .venv + install + a real co-design sweep (SQLite study, Pareto CSV/PNG)
#   make test   -> .venv + install + ruff + the default test suite
# Both are idempotent: the venv is reused and only reinstalled when pyproject/constraints change.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?= -n 2
DEMO_CONFIG ?= experiments/configs/demo.yaml

.PHONY: venv demo test test-slow lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/coexplore run $(DEMO_CONFIG)

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# exit status 5 = "no tests collected" (no slow tests yet) is not a failure
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS) || [ $$? -eq 5 ]

clean:
	rm -rf $(VENV) runs .pytest_cache
