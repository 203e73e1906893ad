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

.PHONY: venv plan test promtool mutation
venv: $(VENV)/.installed

# The rule and dashboard tests run Prometheus's own engine: promtool, from Debian's prometheus package.
# Installed where apt-get can (as root, as CI runs); elsewhere those tests fail and say how to get it.
promtool:
	@command -v promtool >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		prometheus >/dev/null; } || echo "promtool not installed: apt-get install prometheus (the rule tests need it)"

plan: venv
	$(VENV)/bin/seedance plan --stack $(STACK)

test: $(VENV)/.installed-dev promtool
	$(VENV)/bin/python -m pytest

# How many one-line mutations of the core packages the tests kill (tens of minutes; not part of test).
mutation: $(VENV)/.installed-dev
	$(VENV)/bin/python scripts/mutation.py
