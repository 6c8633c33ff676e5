# Two commands do all the set-up on a fresh machine:
#   make report   execute every notebook against the sandbox, write HTML reports to reports/
#                 (each report twice: <name>.html with its code, <name>-no-code.html without)
#   make test     ruff, mypy and the whole test suite, notebooks included (pytest --nbval), the
#                 documentation site built strictly among the tests (tests/test_docs.py), on
#                 TEST_WORKERS pytest-xdist workers (docs/testing.md); with CI set (as .ci/run
#                 has it), the vendors' clients are installed and their conformance suite runs too
# and:
#   make docs         build the documentation site into site/ (offline)
#   make dashboard    serve the explorers (dashboards/) with Voila on 127.0.0.1 (offline)
#   make conformance  install the vendors' clients and run tests/conformance
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
CONFORMANCE_STAMP := $(VENV)/.installed-conformance
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
# CI=true (or any value but 0/false) makes `make test` run the conformance suite as well
WITH_CONFORMANCE := $(filter-out 0 false False FALSE,$(CI))
# The committed notebooks' outputs were made with the sandbox world of this instant (its clock
# otherwise follows today's date): notebook runs pin it, so that their outputs stay the same.
NOTEBOOK_NOW := 2026-11-20T09:00:00Z

.PHONY: test browser report docs dashboard conformance lint reliability benchmarks notebooks clean \
	dist

test report notebooks: export TOOLKIT_SANDBOX_NOW := $(NOTEBOOK_NOW)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# The vendors' own clients (pinned in the conformance extra), kept out of dev.
$(CONFORMANCE_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,conformance]"
	touch $(CONFORMANCE_STAMP)

# The suite runs on TEST_WORKERS processes (pytest-xdist; 0 runs it in this one, auto one per
# core). --dist loadgroup keeps each test module, each notebook and the group of tests that
# measure real time on one worker (tests/conftest.py, notebooks/conftest.py), handed out in the
# order tests/conftest.py gives them (--no-loadscope-reorder), the longest first.
TEST_WORKERS ?= 2

# The suite runs with Python's byte-code cache written even where PYTHONDONTWRITEBYTECODE is
# set (as some images set it): else every kernel, server and subprocess of the suite compiles
# the package and the tests' modules again, and pytest rewrites the tests' asserts in each one.
test: $(STAMP) browser $(if $(WITH_CONFORMANCE),$(CONFORMANCE_STAMP))
	$(PY) -m ruff check .
	$(PY) -m mypy
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup \
		--no-loadscope-reorder \
		--nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider

conformance: $(CONFORMANCE_STAMP)
	$(PY) -m pytest -p no:cacheprovider tests/conformance

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict
	@echo "Documentation written: $$(pwd)/site/index.html"

# The compliance, air-quality and routes explorers as dashboards (dashboards/*.ipynb, code
# hidden), served by Voila on 127.0.0.1:$(DASHBOARD_PORT) against the default connection: the
# sandbox when nothing is configured, or the cloud the TOOLKIT_* settings name. The page asks
# nothing of the web (Voila's template without its CDN style sheets: dashboards/voila/).
DASHBOARD_PORT ?= 8866

dashboard: $(STAMP)
	JUPYTER_PATH=$(CURDIR)/dashboards $(PY) -m voila --no-browser --Voila.ip=127.0.0.1 \
		--port=$(DASHBOARD_PORT) --template=offline dashboards/

# Some tests use headless Chromium: one draws an interactive map and hovers over it, others run
# notebooks in JupyterLab and drive their widgets (Playwright, with this browser). A Python
# install cannot bring a browser: where Chromium is missing and this runs as root on Debian, it
# is installed from the system packages; otherwise those tests are skipped and say why.
# The accessibility tests run axe-core in it at the release package-lock.json pins, installed
# with npm into node_modules/ (without npm: the older one axe-playwright-python bundles, slower).
AXE_CORE := node_modules/axe-core/axe.min.js

$(AXE_CORE): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && touch $@; \
	else echo "no npm: the accessibility tests use the axe-core axe-playwright-python bundles"; fi

browser: $(AXE_CORE)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium (system package) for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
			>/dev/null || echo "chromium could not be installed: the browser tests are skipped"; \
	else echo "no chromium (apt-get install chromium): the browser tests are skipped"; fi; }

# The report command (python -m toolkit.report: papermill runs each notebook with its
# parameters, nbconvert writes its page; the executed notebook is kept beside it), REPORT_JOBS
# notebooks at a time in one process: they spend most of their time waiting on long-running
# operations and kernels, not computing. Without the widgets' state the reports show each
# widget's static view (its table, picture and map written into the page) instead of an empty
# space waiting for a widget manager from the web.
# With nothing set the notebooks answer from the sandbox, its day pinned as the committed
# outputs' (NOTEBOOK_NOW); name a cloud to report on yours: `make report CLOUD=public`
# (CREDENTIAL=cli by default then; REPORT_ARGS="--subscription ... --place ..." for the rest).
# Each report is written twice (REPORT_PAGES=both): in full, <name>.html, and without code,
# <name>-no-code.html (text, tables, charts and maps); REPORT_PAGES=full or no-code for one.
REPORT_JOBS ?= 3
REPORT_PAGES ?= both
CLOUD ?=
CREDENTIAL ?= $(if $(CLOUD),cli,)
REPORT_ARGS ?=

report: $(STAMP)
	$(PY) -m toolkit.report --jobs $(REPORT_JOBS) --pages $(REPORT_PAGES) \
		--timeout 300 --output-dir reports $(if $(CLOUD),--cloud $(CLOUD)) \
		$(if $(CREDENTIAL),--credential $(CREDENTIAL)) $(REPORT_ARGS) $(NOTEBOOKS)

# The wheel in dist/, until the distribution is on the package index:
# `pip install "$$(ls dist/*.whl)[notebook]"` (docs/getting-started.md).
dist: $(STAMP)
	rm -rf dist build
	$(PY) -m pip wheel --quiet --no-deps --wheel-dir dist .
	@echo "Built: $$(ls dist/*.whl)"

# Re-execute the notebooks in place (after changing them), keeping widget state out of the files.
# A secret of this run lets the dask workers notebook 08 starts sign in to its sandbox, as the
# kernels of `make test` do (notebooks/conftest.py).
notebooks: $(STAMP)
	TOOLKIT_SANDBOX_SECRET=$$($(PY) -c "import secrets; print(secrets.token_hex(16))") \
	$(PY) -m jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=300 --ExecutePreprocessor.store_widget_state=False $(NOTEBOOKS)

# Every public operation under every fault, then a concurrent soak at a 20% fault rate (real
# waits: a few minutes). Prints the tables docs/reliability.md quotes; exits non-zero if anything
# is lost.
reliability: $(STAMP)
	$(PY) -m tests.reliability.campaign

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

clean:
	rm -rf $(VENV) reports site dist build .cache .pytest_cache .ruff_cache .mypy_cache \
		node_modules
