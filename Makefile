# Two commands do all the set-up on a fresh machine:
#   make report   execute every notebook against the sandbox, write HTML reports to reports/
#   make test     run the whole test suite, notebooks included (pytest --nbval)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NOTEBOOKS := $(sort $(wildcard notebooks/*.ipynb))

.PHONY: test report lint reliability benchmarks notebooks clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg -p no:cacheprovider

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
