# make demo:   install everything into .venv and run a real experiment through the local state machine.
# make test:   install what the tests need (Python extras, the pinned CDK CLI, and Debian's TeX Live and Chromium
#              when missing), then run mypy, ruff (the formatter's check and the linter) and the whole suite, on
#              parallel workers (TEST_WORKERS, pytest-xdist).
# make test-unit | test-integration | test-browser | test-infra: one tier of the suite alone (tests/unit,
#              tests/integration, tests/browser: the pages in Chromium,
#              tests/infra), on the same workers.
# make test-examples: the docs' worked sweeps (docs/examples.py) run again in fresh databases and compared with
#              the pages that show them (minutes; make test checks the single runs the pages show, and the sweeps
#              from their records, docs/example-runs/: a sample of cells run again, the tables added up).
# make docs:   install the docs extra and build the site into site/ (mkdocs build --strict); its reference pages
#              are generated from the code (docs/generated.py, an mkdocs hook). `make docs SERVE=1` serves it on :8000.
# make typecheck: mypy over the runtime (strict) and the workstation (mypy's default checks), as pyproject.toml sets.
# make hooks:  install the git pre-commit hook once per clone (.pre-commit-config.yaml: ruff, ruff format, mypy,
#              import-linter, each from .venv).
# make bootstrap: CDK's bootstrap stack, once per account and region.
# make deploy: install the CDK toolchain and deploy both stacks to the AWS account of your credentials.
# make idle-cost: synthesize (offline) and price what the deployment costs a month before any experiment runs
#              (infra/idle_cost.py, its price table infra/aws_prices.toml); `make idle-cost PROFILE=lean`.
# make flows:  rewrite what the provider registry generates: sweep.asl.json and the experiment flow's provider
#              branches (lambdas/oriole/flows/generate.py); the docs site draws their diagrams when it is built.
# make lock:   re-resolve requirements.txt for Lambda (Linux arm64, CPython 3.14) into requirements-lambda.lock, then
#              every extra of pyproject.toml (the workstation, the CDK app, the docs, the test toolchain) into
#              requirements-dev.lock (keeps their pins; `make lock LOCK_FLAGS=--upgrade` moves every pin).
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
# The runtime dependencies are installed at the exact versions the Lambda asset ships (the lock's, without its
# hashes, which are for the aarch64 wheels): the tests run the shipped stack.
CONSTRAINTS := $(VENV)/lambda-constraints.txt
# Everything else installs at the exact versions of requirements-dev.lock (`make lock`, for every platform and
# Python the project supports): a fresh clone tests with the toolchain the lock was tested with (pytest, mypy, ruff,
# moto, cfn-lint, hypothesis, import-linter, xdist, pre-commit and what they need), never with a newer release.
DEV_LOCK := requirements-dev.lock
INSTALL := $(BIN)/pip install --quiet --constraint $(CONSTRAINTS) --constraint $(DEV_LOCK)
# mkdocs-material prints a banner about its successor on every build.
export NO_MKDOCS_2_WARNING := 1
# jsii prints a banner for Node releases past their end of life; the pinned CDK still works with them.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := $(shell node -p 'process.versions.node.split(".")[0]' 2>/dev/null)

.PHONY: demo test test-unit test-integration test-browser test-infra test-examples typecheck hooks docs bootstrap deploy synth bench flows lock \
	idle-cost

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(CONSTRAINTS): requirements-lambda.lock $(BIN)/python
	sed -n 's/^\([A-Za-z0-9._-]*==[^ ]*\).*/\1/p' requirements-lambda.lock > $@

$(VENV)/.local-installed: $(BIN)/python pyproject.toml requirements.txt $(CONSTRAINTS) $(DEV_LOCK)
	$(INSTALL) -e ".[local]"
	touch $@

$(VENV)/.cdk-installed: $(VENV)/.local-installed
	$(INSTALL) -e ".[local,cdk]"
	touch $@

$(VENV)/.test-installed: $(VENV)/.cdk-installed
	$(INSTALL) -e ".[local,cdk,test]"
	touch $@

$(VENV)/.docs-installed: $(VENV)/.local-installed
	$(INSTALL) -e ".[local,docs]"
	touch $@

# Debian packages the tests drive: TeX Live with booktabs (report --format latex is compiled), Chromium (the viewer's
# pages in a real browser) and a font for it. Installed when missing, as root (CI runs as root on a fresh machine);
# otherwise the command says what to install.
DEBIAN_TEST_PACKAGES := texlive-latex-recommended chromium fonts-dejavu-core
$(VENV)/.debian-installed: Makefile | $(BIN)/python
	@missing="$$(for p in $(DEBIAN_TEST_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done)"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
		else echo "the tests need these Debian packages: sudo apt-get install $$missing" >&2; exit 1; fi; \
	fi
	touch $@

# Inspect AI (oriole export --format inspect) in a venv of its own, installed as a researcher would: it needs
# aiobotocore, whose releases all pin botocore below the Lambda lock's, so it cannot join the test venv.
# tests/integration/test_inspect_export.py runs the export and Inspect's reader there.
INSPECT_VENV := .venv-inspect
$(INSPECT_VENV)/.installed: pyproject.toml requirements.txt
	$(PYTHON) -m venv $(INSPECT_VENV)
	$(INSPECT_VENV)/bin/pip install --quiet --upgrade pip
	$(INSPECT_VENV)/bin/pip install --quiet -e ".[local,analysis,inspect]" "pandas>=2,<4"
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

demo: $(VENV)/.local-installed
	$(BIN)/oriole run --maze perfect-11 --agent explorer

# The suite's workers: one per core and one more by default (its tests spend a third of their time waiting on
# servers, subprocesses and state machines: on 2 cores, 3 workers run it in 7 min 8 s where 2 took 8 min 11 s), each
# with its own embedded PostgreSQL; tests/isolation.py
# says what keeps them (and two suites run at once) apart. A file's tests stay on one worker (their module fixtures
# are made once); a crashed worker fails the run at once, naming its test, instead of being replaced.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST := $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --max-worker-restart 0

test: $(VENV)/.test-installed $(VENV)/.debian-installed $(INSPECT_VENV)/.installed node_modules/.installed typecheck
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(PYTEST)

typecheck: $(VENV)/.test-installed
	$(BIN)/mypy

test-unit: $(VENV)/.test-installed
	$(PYTEST) tests/unit -q

test-integration: $(VENV)/.test-installed $(VENV)/.debian-installed $(INSPECT_VENV)/.installed node_modules/.installed
	$(PYTEST) tests/integration

test-browser: $(VENV)/.test-installed $(VENV)/.debian-installed
	$(PYTEST) tests/browser

test-infra: $(VENV)/.test-installed node_modules/.installed
	$(PYTEST) tests/infra

# The docs' worked sweeps run again in fresh databases and compared with the pages (minutes).
test-examples: $(VENV)/.test-installed
	ORIOLE_DOC_EXAMPLES=1 $(PYTEST) tests/integration/test_doc_examples.py

hooks: $(VENV)/.test-installed
	$(BIN)/pre-commit install

SERVE ?=
docs: $(VENV)/.docs-installed
	$(if $(SERVE),$(BIN)/mkdocs serve,$(BIN)/mkdocs build --strict)

synth: $(VENV)/.cdk-installed node_modules/.installed
	npx cdk synth --quiet --no-notices  # every stack into cdk.out; no template on the screen, no notices

bootstrap: $(VENV)/.cdk-installed node_modules/.installed
	npx cdk bootstrap

deploy: $(VENV)/.cdk-installed node_modules/.installed
	npx cdk deploy --all

PROFILE ?= standard
idle-cost: $(VENV)/.cdk-installed node_modules/.installed
	npx cdk synth -q -c skipBundling=true -c profile=$(PROFILE) -o cdk.out.$(PROFILE)
	$(BIN)/python -m infra.idle_cost cdk.out.$(PROFILE)

$(VENV)/.bench-installed: $(VENV)/.local-installed
	$(INSTALL) -e ".[local,bench]"
	touch $@

bench: $(VENV)/.bench-installed
	$(BIN)/python bench/bench_local_run.py
	$(BIN)/python bench/bench_render_memory.py

flows: $(VENV)/.local-installed
	$(BIN)/python -m oriole.flows.generate

# uv is a tool of this target only; each lock keeps its pins until its inputs ask for others (or
# LOCK_FLAGS=--upgrade). manylinux_2_28: the wheels Lambda's Amazon Linux 2023 (glibc 2.34) runs. The development
# lock is universal (markers where a platform or a Python differs) from the oldest Python supported, and takes the
# runtime's versions from the Lambda lock, so the tests run what ships. It holds every extra but inspect, whose
# aiobotocore pins a botocore older than the Lambda lock's (.venv-inspect installs it as a researcher would).
LOCK_FLAGS ?=
DEV_EXTRAS := $(foreach extra,local cdk analysis view docs test bench,--extra $(extra))
lock: $(BIN)/python
	$(BIN)/pip install --quiet "uv>=0.5,<1"
	$(BIN)/uv pip compile requirements.txt --python-platform aarch64-manylinux_2_28 --python-version 3.14 \
		--generate-hashes --custom-compile-command "make lock" --output-file requirements-lambda.lock $(LOCK_FLAGS)
	sed -n 's/^\([A-Za-z0-9._-]*==[^ ]*\).*/\1/p' requirements-lambda.lock > $(CONSTRAINTS)
	$(BIN)/uv pip compile pyproject.toml $(DEV_EXTRAS) --universal --python-version 3.11 --constraint $(CONSTRAINTS) \
		--custom-compile-command "make lock" --output-file $(DEV_LOCK) $(LOCK_FLAGS)
