# Thin aliases. Every target that needs the virtualenv depends on it, so each works on a fresh clone.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# make test's xdist processes: 3 on a 2-core host. With 2, the cores spent 9 to 12% of the session waiting on
# I/O and 3 to 5% idle (tests that wait on scripts, timeouts and imports); with 3, 1 to 3% and 2%. Measured on a
# 2-core AMD EPYC (Zen 4), 2026-12-02, an empty cache each, alternating: pytest 487.6 and 467.1 s with 2,
# 399.1 and 413.0 s with 3, 425.4 s with 4 (bench/HISTORY.md)
JOBS   ?= 3

.PHONY: setup run test lint docs bench clean host-matrix models

EXAMPLE := examples/convdiff-onnx-reference

$(STAMP): pyproject.toml constraints.txt $(EXAMPLE)/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[all,dev]'
	@# the out-of-tree adapter example, installed as a user installs theirs (docs/guide/adapters.md)
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt -e $(EXAMPLE)
	@# pytest rewrites the asserts of every plugin package it loads from the venv (hypothesis, xdist, anyio:
	@# 111 modules, ~1.5 s of each pytest process's start) and caches the result beside them, unless
	@# PYTHONDONTWRITEBYTECODE is set: write that cache once here, in the venv only (an empty directory,
	@# convdiff's own plugin off), so that no pytest process of make test, nor one its tests start, redoes it
	@d=$$(mktemp -d) && (cd $$d && PYTHONDONTWRITEBYTECODE= $(abspath $(PY)) -m pytest -q -p no:cacheprovider \
		-p no:convdiff --collect-only >/dev/null 2>&1; rmdir $$d)
	touch $(STAMP)

BROWSER := $(VENV)/.chromium-checked

# Debian's chromium for the report's browser test; tried once per venv, skipped (with a note) without root.
$(BROWSER): | $(STAMP)
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 \
		|| echo "note: chromium not installed (apt-get install -y chromium); the report's browser test will skip"
	@touch $(BROWSER)

setup: $(STAMP) $(BROWSER)

## run: the full corpus on every installed backend; those that compile a model per case on a fixed 1/SAMPLE of it;
## the metamorphic relations on a fixed 1/RELATIONS of it (1/RELATIONS_COMPILED on those backends: every derived
## run is a build there); the nightly runs everything
SAMPLE ?= 16
RELATIONS ?= 64
RELATIONS_COMPILED ?= 1024
run: $(STAMP)
	$(VENV)/bin/convdiff run --tier full --compiled-sample $(SAMPLE) --relations all --relations-sample $(RELATIONS) \
		--relations-compiled-sample $(RELATIONS_COMPILED) --out reports/out

## test: the harness's own tests plus the smoke tier on every installed backend
## (--dist loadgroup: each backend's items on one xdist process, so its framework is imported once)
## (PYTHONDONTWRITEBYTECODE= : the first process to import a module of the tree caches its bytecode, pytest's
## assert-rewritten test modules included, and every later one reads it: each process that collects the tests
## otherwise rewrote ~300 modules, 2 CPU-s, and each worker, template and script compiled convdiff's own)
test: $(STAMP) $(BROWSER)
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest tests cases --convdiff-tier smoke -n $(JOBS) --dist loadgroup --no-loadscope-reorder -q

## host-matrix: the corpus under each emulated host (TF oneDNN off/on, oneDNN capped at AVX2, ATen default,
## an AVX2-only machine); fails if any row has an unexpected result. TIER=full for the whole corpus.
TIER ?= smoke
host-matrix: $(STAMP)
	$(PY) -m harness.host_matrix --tier $(TIER) --out reports/host-matrix

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/deptry .
	$(VENV)/bin/actionlint .github/workflows/*.yml

## docs: the documentation site (MkDocs, Material) into site/, --strict (a warning fails it); the reference
## pages are generated from the code (docs/hooks.py). tests/test_docs.py builds and checks it the same way: in CI's
## docs step and the nightly (CONVDIFF_FULL_TESTS=1), not in make test (its cost).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

## models: regenerate cases/models/ from real architectures (convdiff extract) and say whether anything changed
models: $(STAMP)
	$(PY) -m harness.commands.extract.corpus --out cases/models
	@git diff --stat -- cases/models 2>/dev/null || true

BENCH_E2E ?= torch,tensorflow,tensorflow-keras,paddle,jax,onnxruntime,openvino,tvm
bench: $(STAMP)
	$(PY) bench/bench.py
	@# a small run's fixed cost: its steps, then side by side with the bare loop (620 cases) and the quick start
	$(PY) bench/startup.py
	$(PY) bench/e2e.py --corpus --backends $(BENCH_E2E)
	$(PY) bench/deployed_cost.py
	$(PY) bench/where_time_goes.py
	$(PY) bench/crash_restart.py
	$(PY) bench/fresh_clone.py
	$(PY) bench/workflow_jobs.py
	@# a cold night's cost on 12 cases with the relations' runs built one by one and in the batches (ahead.py)
	$(PY) bench/nightly_ab.py --baseline CONVDIFF_BATCH=cases --out reports/bench/relations-ahead
	$(PY) bench/nightly_ab.py --baseline CONVDIFF_INDUCTOR_KEEP=0 --backends torch-inductor --out reports/bench/inductor-keep
	@# the share of the host's known issues a 10-minute fuzz rediscovers (seed 1), what longer ones could reach
	@# at that run's costs, and scope on four planted bugs
	$(PY) bench/fuzz_share.py
	$(PY) bench/fuzz_reach.py --from reports/bench/fuzz-share
	$(PY) bench/scope_planted.py

clean:
	rm -rf $(VENV) reports/out reports/host-matrix .convdiff-cache site
