# The two commands of the README: `make plan` and `make test`. Both build .venv when it is missing.
PYTHON ?= python3.11
VENV := .venv
STACK ?= dev

$(VENV)/.installed: pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $@

.PHONY: venv plan test
venv: $(VENV)/.installed

plan: venv
	$(VENV)/bin/seedance plan --stack $(STACK)

test: venv
	$(VENV)/bin/python -m pytest
