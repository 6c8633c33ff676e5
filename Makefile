# Two commands do all the set-up on a fresh machine:
#   make report   execute every notebook against the sandbox, write HTML reports to reports/
#   make test     run the whole test suite, notebooks included (pytest --nbval)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))
# The committed notebooks' outputs were made with the sandbox world of this instant (its clock
# otherwise follows today's date): notebook runs pin it, so that their outputs stay the same.
NOTEBOOK_NOW := 2026-11-20T09:00:00Z

.PHONY: test browser report lint reliability benchmarks notebooks clean

test report notebooks: export TOOLKIT_SANDBOX_NOW := $(NOTEBOOK_NOW)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

test: $(STAMP) browser
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider

# One test draws an interactive map in headless Chromium. A Python install cannot bring a browser:
# where Chromium is missing and this runs as root on Debian, it is installed from the system
# packages; otherwise that test is skipped and says why.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium (system package) for the map-drawing test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
			>/dev/null || echo "chromium could not be installed: the map-drawing test is skipped"; \
	else echo "no chromium (apt-get install chromium): the map-drawing test is skipped"; fi; }

report: $(STAMP)
	mkdir -p reports
	$(PY) -m jupyter nbconvert --to html --execute \
		--ExecutePreprocessor.timeout=300 --output-dir reports $(NOTEBOOKS)
	@echo "Reports written:"; for f in $(NOTEBOOKS); do \
		echo "  $$(pwd)/reports/$$(basename $${f%.ipynb}).html"; done

# Re-execute the notebooks in place (after changing them), keeping widget state out of the files.
notebooks: $(STAMP)
	$(PY) -m jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=300 --ExecutePreprocessor.store_widget_state=False $(NOTEBOOKS)

# Every public operation under every fault, then a concurrent soak at a 20% fault rate (real
# waits: a few minutes). Prints the tables the README quotes; exits non-zero if anything is lost.
reliability: $(STAMP)
	$(PY) -m tests.reliability.campaign

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

clean:
	rm -rf $(VENV) reports .pytest_cache .ruff_cache .mypy_cache
