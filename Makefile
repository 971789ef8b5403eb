# The README's two commands are `make run` and `make test`; each sets up what it needs first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= 2
SNAKEMAKE_ARGS ?=

.PHONY: setup browser run test test-fast lint report lock envs clean plan figures verify

# A virtual environment with the pinned packages (requirements.lock) and vcrbench, rebuilt when
# the lock file or pyproject.toml changes.
setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

# The library's bytecode, written before a run or the tests (only what changed is compiled again):
# a run starts an interpreter per job, and where PYTHONDONTWRITEBYTECODE is set (some CI and
# container images) each of them would otherwise compile vcrbench from source (about 0.5 s).
BYTECODE := $(BIN)/python -m compileall -q src

# Every target that runs the workflow or plans it (run, figures, report, plan) takes the same two
# variables: CONFIG=my.yaml, the config (default: the embedded default, config/config.yaml, named
# by the workflow profile), and SNAKEMAKE_ARGS="...", more arguments for Snakemake (plan makes
# its own dry runs and takes CONFIG only).
CONFIG ?=
CONFIG_ARGS = $(if $(CONFIG),--configfile $(CONFIG))

# The main job: the whole workflow on the embedded default (config/config.yaml), offline.
run: setup
	$(BYTECODE)
	NO_ALBUMENTATIONS_UPDATE=1 $(BIN)/snakemake --cores $(CORES) --show-failed-logs $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

# The full test suite, as CI runs it (includes the end-to-end workflow and SLURM tests), on
# TEST_WORKERS pytest-xdist workers (a test file's tests stay on one worker, the longest files
# first: SCHEDULE in tests/workflow/conftest.py; the one finished tiny run is shared by all).
# TEST_WORKERS=0 runs it in one process.
# PYTHONDONTWRITEBYTECODE emptied for pytest alone: where it is set (some CI and container images)
# pytest rewrites every test module's asserts again in every worker, about 8 CPU-seconds each; with
# it empty, the rewritten modules are kept under tests/**/__pycache__ (ignored by git) for the
# next run.
TEST_WORKERS ?= 2
PYTEST := NO_ALBUMENTATIONS_UPDATE=1 PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: setup browser
	$(BYTECODE)
	$(PYTEST) tests

# The headless browser that tests/workflow/test_report_browser.py drives through Selenium (pinned
# in requirements.lock): Debian's chromium and its chromedriver, installed with apt-get when either
# is missing, as root or through password-less sudo. The test uses these two files only, so
# Selenium never downloads a browser or a driver.
CHROMIUM := /usr/bin/chromium
CHROMEDRIVER := /usr/bin/chromedriver
browser:
	@if [ -x $(CHROMIUM) ] && [ -x $(CHROMEDRIVER) ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null; then \
		echo "make browser: $(CHROMIUM) or $(CHROMEDRIVER) is missing and there is no apt-get" \
			"here: install Chromium and its chromedriver at those paths" >&2; exit 1; \
	elif [ "$$(id -u)" = 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else \
		echo "make browser: $(CHROMIUM) or $(CHROMEDRIVER) is missing, and installing them needs" \
			"root or password-less sudo: run 'sudo apt-get install chromium chromium-driver'" >&2; \
		exit 1; \
	fi; \
	echo "make browser: installing Debian's chromium and chromium-driver with apt-get"; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver && \
	[ -x $(CHROMIUM) ] && [ -x $(CHROMEDRIVER) ] || { \
		echo "make browser: apt-get did not install $(CHROMIUM) and $(CHROMEDRIVER)" >&2; exit 1; }

# Everything but the slow paths (tests that run the workflow's jobs, the paper config's dry runs,
# SLURM), for quick iterations.
test-fast: setup
	$(BYTECODE)
	$(PYTEST) tests -m "not slow"

lint: setup
	$(BIN)/ruff check src tests workflow benchmarks scripts
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/snakemake --lint

# What a config costs before it runs (jobs per rule, disk, CPU core-hours, GPU-hours):
# make plan CONFIG=config/paper.yaml
plan: setup
	NO_ALBUMENTATIONS_UPDATE=1 $(BIN)/python scripts/plan_cost.py --configfile $(or $(CONFIG),config/config.yaml)

# Every figure and table again from a results/ folder alone (an archive, a colleague's copy: any
# mtimes, no .snakemake/): only the figure and table rules run, on the predictions and estimates
# found there; nothing is generated, predicted or estimated (vcrbench.plan.cluster.archive_args).
figures: setup
	NO_ALBUMENTATIONS_UPDATE=1 $(BIN)/snakemake --cores $(CORES) $$($(BIN)/python -m vcrbench.plan.cluster) $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)

# Every output checked against the sha256 its provenance record holds (and Parquet files against
# their page checksums); a damaged one is listed with the command that regenerates it.
verify: setup
	$(BIN)/python -m vcrbench.plan.verify

# The HTML report of a finished run (results/report.html); CONFIG and SNAKEMAKE_ARGS as for
# `make run`, e.g. make report CONFIG=my.yaml for a run of that config.
# Snakemake offers a table only as a CSV download; the second step shows each as a sortable table
# (vcrbench.plan.report).
report: setup
	NO_ALBUMENTATIONS_UPDATE=1 $(BIN)/snakemake --cores $(CORES) --report results/report.html $(CONFIG_ARGS) $(SNAKEMAKE_ARGS)
	$(BIN)/python -m vcrbench.plan.report results/report.html

lock: setup
	$(BIN)/python -m pip freeze --exclude-editable | sed 's/^torch==\(.*\)/torch===\1/' > requirements.lock.new
	@echo "review requirements.lock.new (keep the header comment), then move it over requirements.lock"

clean:
	rm -rf results .snakemake

envs:
	$(BIN)/python tools/lock_to_conda.py requirements.lock envs/vcrbench.yaml
