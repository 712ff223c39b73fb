# Two entry points a fresh machine needs (Python 3.11 + make):
#   make demo   -> .venv + install + a real co-design sweep (SQLite study, Pareto CSV/PNG)
#   make test   -> .venv + install + ruff + the layering contracts (lint-imports) + the docs (the site
#                  builds in strict mode; every figure between markers equals its record) + the default test suite
#   make docs   -> the documentation site in site/ (mkdocs-material; `.venv/bin/mkdocs serve` to browse it)
# Both are idempotent: the venv is reused and only reinstalled when pyproject/constraints change.
#   make validate-env -> .venv-scalesim with SCALE-Sim 3.0.0 (numpy<2.4), for the model checks
#   make zigzag-env   -> .venv-zigzag with ZigZag 3.9.1, for the cost-model throughput comparison
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?= -n 2
DEMO_CONFIG ?= experiments/configs/demo.yaml
SCALESIM_VENV := .venv-scalesim
SCALESIM_STAMP := $(SCALESIM_VENV)/.installed
ZIGZAG_VENV := .venv-zigzag
ZIGZAG_STAMP := $(ZIGZAG_VENV)/.installed
OPTICS_VENV := .venv-optics
OPTICS_STAMP := $(OPTICS_VENV)/.installed

.PHONY: venv demo test test-slow lint docs clean validate-env zigzag-env optics-env

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,baselines,dask,postgres,optics,onnx]"
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/coexplore run $(DEMO_CONFIG)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# the site builds offline in a few CPU seconds; --strict fails on a broken link, a page left out
# of the nav or a docstring mkdocstrings cannot read
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	$(BIN)/python -m experiments.figures render --check
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# exit status 5 = "no tests collected" (no slow tests yet) is not a failure
test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS) || [ $$? -eq 5 ]

clean:
	rm -rf $(VENV) runs site .pytest_cache

# SCALE-Sim 3.0.0 needs numpy<2.4, coexplore pins numpy 2.4: it gets its own venv, used by
# experiments/validation/scalesim_compare.py and tests/evaluators/test_scalesim_agreement.py.
# The venv ignores itself in git (a '*' .gitignore inside it, as Python 3.13's venv does).
$(SCALESIM_VENV)/bin/python:
	$(PYTHON) -m venv $(SCALESIM_VENV)
	echo '*' > $(SCALESIM_VENV)/.gitignore
	$(SCALESIM_VENV)/bin/python -m pip install --quiet --upgrade pip

$(SCALESIM_STAMP): $(SCALESIM_VENV)/bin/python constraints-scalesim.txt
	$(SCALESIM_VENV)/bin/python -m pip install --quiet -c constraints-scalesim.txt "scalesim==3.0.0" "numpy<2.4"
	touch $(SCALESIM_STAMP)

validate-env: $(SCALESIM_STAMP)

# ZigZag 3.9.1 (zigzag-dse, plus six that its YAML validator imports but does not declare),
# the reference cost model for the throughput benchmark: experiments/benchmarks/
# zigzag_costmodel.py runs inside this venv, experiments/benchmarks/zigzag_compare.py calls it
# from .venv. Its own venv keeps ZigZag's dependency tree (its onnx pin, sympy, seaborn, ...) away from
# coexplore's pins; exact versions in constraints-zigzag.txt. Ignores itself in git like
# .venv-scalesim.
$(ZIGZAG_VENV)/bin/python:
	$(PYTHON) -m venv $(ZIGZAG_VENV)
	echo '*' > $(ZIGZAG_VENV)/.gitignore
	$(ZIGZAG_VENV)/bin/python -m pip install --quiet --upgrade pip

$(ZIGZAG_STAMP): $(ZIGZAG_VENV)/bin/python constraints-zigzag.txt
	$(ZIGZAG_VENV)/bin/python -m pip install --quiet -c constraints-zigzag.txt "zigzag-dse==3.9.1" six
	$(ZIGZAG_VENV)/bin/python -c "import six, zigzag.api, zigzag.cost_model.cost_model"
	touch $(ZIGZAG_STAMP)

zigzag-env: $(ZIGZAG_STAMP)

# Peer optics libraries (issue 47): LightPipes 2.1.5 and diffractsim 2.2.13 in their own venv,
# never dependencies of coexplore; experiments/validation/optics_peers.py runs inside it and
# tests/evaluators/optics/test_optics_peers.py (slow) calls it, skipping when the venv is absent.
$(OPTICS_VENV)/bin/python:
	$(PYTHON) -m venv $(OPTICS_VENV)
	echo '*' > $(OPTICS_VENV)/.gitignore
	$(OPTICS_VENV)/bin/python -m pip install --quiet --upgrade pip

$(OPTICS_STAMP): $(OPTICS_VENV)/bin/python
	$(OPTICS_VENV)/bin/python -m pip install --quiet "LightPipes==2.1.5" "diffractsim==2.2.13"
	$(OPTICS_VENV)/bin/python -c "import LightPipes, diffractsim"
	touch $(OPTICS_STAMP)

optics-env: $(OPTICS_STAMP)
