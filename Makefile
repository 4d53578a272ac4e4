# The two commands of the README. Both build .venv from nothing but a Python 3.11+ interpreter.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/kplane serve $(ARGS)

# The import contracts (.importlinter) first: a broken layer fails in a second, not after the suite.
# The suite runs on two workers, one test file each at a time (module-scoped servers stay shared);
# TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m tests.lint_imports
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

bench: $(STAMP)
	cd bench && for b in api_bench storage_bench backends_bench create_phases_bench create_walks_bench list_bench cache_memory_bench watch_bench rollout_bench fixture_bench new_plugin_bench overload_bench tls_bench auth_bench crd_bench statefulset_bench daemonset_bench job_bench admission_bench ha_bench workers_bench metrics_bench density_bench; do \
		echo "== $$b"; ../$(BIN)/python $$b.py || exit 1; done

clean:
	rm -rf $(VENV) .kplane
