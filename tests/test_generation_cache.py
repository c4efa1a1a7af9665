"""The Decoding lab's one road: one cached wrapper runs any backend, here or served, and gives what the library
gives; the page and its view reach no served-only decoding cache, and never ask which kind a column is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.caches import generation as cache
from explorer.runtime.resolve import resolve
from explorer.serving import backend
from explorer.serving.endpoints import Endpoint
from explorer.tasks.generation import DecodingSettings, generate, load_decoder, next_token
from tests.tiny_gemma import save_tiny_gemma

ROOT = Path(__file__).resolve().parents[1]
PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> str:
    return str(save_tiny_gemma(tmp_path_factory.mktemp("gemma")))


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, ``from a import b`` also counted as ``a.b``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _functions(path: Path) -> set[str]:
    return {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}


def test_the_page_and_its_view_take_one_road() -> None:
    for part in ("pages/decoding.py", "app/views/generation.py"):
        imported = _imports(ROOT / part)
        assert "app.caches.generation" in imported, part
        assert "app.caches.serving" not in imported and "explorer.serving.decoding" not in imported, part
        source = (ROOT / part).read_text()
        assert "LocalBackend" not in source and "ServedBackend" not in source, f"{part} asks which kind a model is"
    serving = ROOT / "app/caches/serving.py"
    assert not _functions(serving) & {"next_token", "generation", "fast_generation"}
    assert "explorer.serving.decoding" not in _imports(serving)


def test_the_wrapper_gives_the_librarys_next_token_table_for_a_local_backend(tiny_dir, monkeypatch) -> None:
    direct = next_token(load_decoder(resolve(tiny_dir), device="cpu"), PROMPT, 7)
    one, other = backend.decoder(resolve(tiny_dir), device="cpu"), backend.decoder(resolve(tiny_dir), device="cpu")
    cached = cache.next_token(one, PROMPT, 7)
    assert cached == direct and len(cached.candidates) == 7
    monkeypatch.setattr(backend.LocalBackend, "next_token", lambda *a: pytest.fail("the model ran again"))
    assert cache.next_token(other, PROMPT, 7) == direct  # another instance, the same ident: a hit


def test_the_wrappers_decoder_continues_and_ends_as_the_librarys_run(tiny_dir) -> None:
    settings = DecodingSettings("sample", 0.8, 40, 0.9, 2, 60, 3)
    model = backend.decoder(resolve(tiny_dir), device="cpu")
    first = cache.generation(model, PROMPT, settings, 2)
    later = cache.generation(backend.decoder(resolve(tiny_dir), device="cpu"), PROMPT, settings, 5)  # the Step button
    whole = generate(load_decoder(resolve(tiny_dir), device="cpu"), PROMPT,
                     DecodingSettings("sample", 0.8, 40, 0.9, 2, 5, 3))
    assert later.token_ids == whole.token_ids and later.token_ids[:2] == first.token_ids
    assert cache._decoders()[(model.ident, PROMPT, settings)].done == 5  # one live decoder, continued


def test_a_backends_ident_names_the_model_and_where_it_runs(tiny_dir) -> None:
    here = backend.decoder(resolve(tiny_dir), device="cpu")
    assert here.ident == backend.decoder(resolve(f" {tiny_dir} "), device="cpu").ident
    assert here.ident != backend.decoder(resolve(tiny_dir), device="cpu", dtype="bfloat16").ident
    a, b = Endpoint("gemma", "http://127.0.0.1:9/v1", "m"), Endpoint("gemma", "http://127.0.0.1:10/v1", "m")
    assert backend.served(a).ident == backend.served(a).ident != backend.served(b).ident
    assert backend.local(load_decoder(resolve(tiny_dir), device="cpu")).in_process and not backend.served(a).in_process
    assert here.shown == Path(tiny_dir).name and backend.served(a).shown == "gemma (served)"  # never a whole path
