"""``python -m explorer positions`` and ``kv-cache`` (explorer/cli/positions.py): the issue's JSON fields, the
measured cache on the bundled Gemma's stand-in, and one-line errors."""

from __future__ import annotations

import json

import pytest

from explorer.architecture import catalog, kvcache

LAYER_FIELDS = {"layer", "kind", "kv_heads", "head_width", "window", "bytes"}
CACHE_FIELDS = {"model", "context", "dtype", "bytes", "bytes_per_token", "layers", "measured_bytes", "tokens_equal",
                "cached_tokens_per_s", "uncached_tokens_per_s"}


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    from explorer.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return int(code or 0), out, err


def test_positions_json_names_the_kind_and_its_parameters(capsys) -> None:
    code, out, _ = _cli(capsys, "positions", "--model", "gpt-j", "--distance-max", "4", "--json")
    d = json.loads(out)
    assert code == 0 and d["model"] == "gpt-j" and d["kind"] == "rotary"
    assert d["bases"] == {"all": 10_000.0} and d["rotary_dims"] == 64 and d["layout"] == "pairs"
    assert d["by_distance"]["distances"] == [-4, -3, -2, -1, 0, 1, 2, 3, 4]
    code, out, _ = _cli(capsys, "positions", "--model", "t5-small", "--json")
    d = json.loads(out)
    assert d["kind"] == "relative-buckets" and d["buckets"] == 32 and d["max_distance"] == 128


def test_kv_cache_json_has_exactly_the_issues_fields(capsys) -> None:
    code, out, _ = _cli(capsys, "kv-cache", "--model", "gemma3-270m", "--context", "1000", "--dtype", "bfloat16",
                        "--json")
    d = json.loads(out)
    assert code == 0 and set(d) == CACHE_FIELDS and all(set(layer) == LAYER_FIELDS for layer in d["layers"])
    plan = kvcache.plan(catalog.variant_config("gemma3-270m"), 1000, "bfloat16")
    if d["bytes_per_token"] == plan.bytes_per_token:  # the real config (the stand-in has its own, smaller one)
        assert d["bytes"] == plan.bytes
    assert d["measured_bytes"] is None and d["tokens_equal"] is None
    assert d["bytes"] == sum(layer["bytes"] for layer in d["layers"])


def test_kv_cache_reads_a_users_config_json(capsys, tmp_path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
                                "num_attention_heads": 8, "num_key_value_heads": 2, "max_position_embeddings": 128}))
    code, out, _ = _cli(capsys, "kv-cache", "--model", str(path), "--context", "10", "--json")
    d = json.loads(out)
    assert code == 0 and d["bytes_per_token"] == 2 * 2 * 2 * 8 * 4 and d["bytes"] == 10 * d["bytes_per_token"]


def test_kv_cache_measure_on_the_bundled_gemma(capsys) -> None:
    code, out, _ = _cli(capsys, "kv-cache", "--model", "gemma3-270m", "--context", "12", "--measure",
                        "--new-tokens", "4", "--device", "cpu", "--json")
    d = json.loads(out)
    assert code == 0 and set(d) == CACHE_FIELDS and d["context"] <= 12
    assert d["measured_bytes"] == d["bytes"] and d["tokens_equal"] is True
    assert d["cached_tokens_per_s"] > 0 and d["uncached_tokens_per_s"] > 0


@pytest.mark.parametrize("argv", [
    ("kv-cache", "--model", "no-such-model", "--context", "5"),
    ("kv-cache", "--model", "gpt2", "--context", "0"),
    ("kv-cache", "--model", "gpt2", "--context", "-3"),
    ("kv-cache", "--model", "gpt2", "--context", "99999999999"),
    ("kv-cache", "--model", "gpt2", "--context", "5", "--dtype", "float8"),
    ("kv-cache", "--model", "gpt2", "--context", "5", "--measure"),
    ("kv-cache", "--model", "missing.json", "--context", "5"),
    ("positions", "--model", "no-such-model"),
    ("positions", "--model", "gpt2", "--distance-max", "0"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv) -> None:
    code, out, err = _cli(capsys, *argv)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and "Traceback" not in err
