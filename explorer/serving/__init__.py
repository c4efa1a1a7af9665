"""Served models: decoders and encoders behind an OpenAI-compatible inference engine (vLLM, SGLang, TGI,
llama.cpp, llama-cpp-python, Ollama), used beside the in-process ones.

- :mod:`~explorer.serving.endpoints`: which endpoints exist (the operator's environment and TOML file), typed ones
- :mod:`~explorer.serving.client`: the HTTP calls, one clear message per failure, a bound per endpoint
- :mod:`~explorer.serving.wire`: one deadline over each whole exchange, the answer read up to a cap as it streams
- :mod:`~explorer.serving.answers`: the typed shapes every answer is checked against before it is read
- :mod:`~explorer.serving.completion`: a completion read from either log-probability shape
- :mod:`~explorer.serving.errors`: the one ServedError, and a server's own words cut to a clean excerpt
- :mod:`~explorer.serving.probe`: what a server can do (top-k, prompt log-probabilities, largest k, embeddings)
- :mod:`~explorer.serving.decoding`: next-token tables and decoding step by step from the client (every strategy)
- :mod:`~explorer.serving.scoring`: a text's log-likelihood from prompt log-probabilities (fill-in, QA)
- :mod:`~explorer.serving.embedding`: sentence embeddings from ``/v1/embeddings``
- :mod:`~explorer.serving.localengine`: a real engine on 127.0.0.1 (llama-cpp-python on the bundled GGUF)
- :mod:`~explorer.serving.enginesort`: that engine's log-probabilities ranked by numpy (its own list, sooner)
- :mod:`~explorer.serving.backend`: one interface to a model loaded here or served, the same answers from both

A served model's results are named ``served:NAME`` (:attr:`~explorer.serving.endpoints.Endpoint.key`); pages pick
endpoints with ``app/views/served_picker.py``, the CLI with ``--endpoint`` / ``--base-url``. What an engine cannot give
(attention maps, hidden states, layer trees) stays local and says why.
"""

from __future__ import annotations
