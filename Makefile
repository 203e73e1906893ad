# The two commands of the README: `make plan` and `make test`. Both build .venv when it is missing;
# the plan installs only what the program and the CLI run, the tests add their tools (the dev extras).
PYTHON ?= python3.11
VENV := .venv
STACK ?= dev

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(VENV)/bin/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

.PHONY: venv plan test
venv: $(VENV)/.installed

plan: venv
	$(VENV)/bin/seedance plan --stack $(STACK)

test: $(VENV)/.installed-dev
	$(VENV)/bin/python -m pytest
