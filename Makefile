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

.PHONY: venv plan test promtool mutation charts engines
venv: $(VENV)/.installed

# The rule and dashboard tests run Prometheus's own engine: promtool, from Debian's prometheus package.
# Installed where apt-get can (as root, as CI runs); elsewhere those tests fail and say how to get it.
promtool:
	@command -v promtool >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		prometheus >/dev/null; } || echo "promtool not installed: apt-get install prometheus (the rule tests need it)"

plan: venv
	$(VENV)/bin/seedance plan --stack $(STACK)

# The engine tests' real engines (engines/build.py): the Pulumi CLI and Kubernetes provider, kube-apiserver,
# kube-controller-manager and kube-scheduler at each Kubernetes minor the stacks use, etcd, kwok and Kueue's
# controller, built with Go from the module proxy into a cache outside the clone. Cold on this machine's kind:
# README; warm: instant.
engines:
	@$(PYTHON) engines/build.py

test: $(VENV)/.installed-dev promtool engines
	@$(VENV)/bin/python -c "import sys; from seedance.charts import chart_cache; sys.exit(not chart_cache().is_dir())" \
		|| $(MAKE) charts || echo "no chart cache and no network: the chart tests will fail; run 'make charts' where \
	https reaches the chart repositories, or set SEEDANCE_CHART_CACHE to a folder of the pinned charts"
	$(VENV)/bin/python -m pytest

# The Helm charts every stack's releases pin, pulled from their repositories at their versions and checked
# against the digests the repositories publish, into the chart cache (seedance/charts.py: SEEDANCE_CHART_CACHE,
# else ../shared/charts when it exists, else .charts here). The gate renders them; so do the tests.
charts: venv
	@for stack in dev staging prod; do \
		$(VENV)/bin/seedance plan --stack $$stack --json .charts-$$stack.plan.json --show-secrets >/dev/null && \
		$(VENV)/bin/seedance charts pull --plan .charts-$$stack.plan.json || exit 2; \
		rm -f .charts-$$stack.plan.json; \
	done

# How many one-line mutations of the core packages the tests kill (tens of minutes; not part of test).
mutation: $(VENV)/.installed-dev
	$(VENV)/bin/python scripts/mutation.py
