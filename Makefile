# Thin aliases. Every target that needs the virtualenv depends on it, so each works on a fresh clone.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
JOBS   ?= 2

.PHONY: setup run test lint bench clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[all,dev]'
	touch $(STAMP)

BROWSER := $(VENV)/.chromium-checked

# Debian's chromium for the report's browser test; tried once per venv, skipped (with a note) without root.
$(BROWSER): | $(STAMP)
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 \
		|| echo "note: chromium not installed (apt-get install -y chromium); the report's browser test will skip"
	@touch $(BROWSER)

setup: $(STAMP) $(BROWSER)

## run: the main job: every case (full tier) on every installed backend -> reports/out/
run: $(STAMP)
	$(VENV)/bin/convdiff run --tier full --out reports/out

## test: the harness's own tests plus the smoke tier on every installed backend
test: $(STAMP) $(BROWSER)
	$(PY) -m pytest tests cases --tier smoke -n $(JOBS) -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/actionlint .github/workflows/*.yml

bench: $(STAMP)
	$(PY) bench/bench.py

clean:
	rm -rf $(VENV) reports/out .convdiff-cache
