"""Fuzz, not examples: hostile config dictionaries through the library, the CLI and the page.

Every catalog model type's real config is mutated in its numeric fields (huge, negative, zero, float,
string, NaN, None, nested) or loses fields, or gets an unknown model_type; the only acceptable outcomes
are a built model (meta device: no memory) or an ``ExplorerError``. Each case runs under a deadline, and
the peak RSS of the whole fuzz run is printed with the test summary.
"""

from __future__ import annotations

import json
import math
import resource
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.architecture import build, catalog
from explorer.cli import main
from explorer.core.errors import ExplorerError
from tests.conftest import FIGURES

KEYS = [k for k in catalog.keys() if catalog.get_variant(k).head in build.STANDARD_HEADS]
HOSTILE = st.one_of(
    st.integers(-10**30, 10**30), st.sampled_from([0, -1, 1, 2**31, 2**63, 10**12 + 1, 100_000]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8), st.none(), st.booleans(),
    st.lists(st.integers(-5, 5000), max_size=4), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
FUZZ = settings(max_examples=120, deadline=timedelta(seconds=20), suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)


def _numeric_fields(config: dict) -> list[str]:
    return sorted(k for k, v in config.items() if isinstance(v, int | float) and not isinstance(v, bool))


@st.composite
def hostile_configs(draw) -> dict:
    key = draw(st.sampled_from(KEYS))
    config = dict(catalog.variant_config(key))
    fields = _numeric_fields(config)
    for name in draw(st.lists(st.sampled_from(fields), min_size=1, max_size=3, unique=True)):
        config[name] = draw(HOSTILE)
    for name in draw(st.lists(st.sampled_from(sorted(config)), max_size=2, unique=True)):
        if name != "model_type":
            config.pop(name)
    if draw(st.booleans()) and draw(st.booleans()):
        config["model_type"] = draw(st.sampled_from(["bert-ish", "", "t5", "encoder-decoder", "llama"]))
    return config


def _build(config: dict) -> None:
    cfg = build.config_from_dict(config)
    build.instantiate(cfg, build.default_head(cfg), "meta")


@FUZZ
@given(hostile_configs())
def test_library_gives_a_model_or_an_explorer_error(config: dict) -> None:
    try:
        _build(config)
    except ExplorerError as err:
        assert str(err) and "\n" not in str(err)


@pytest.mark.parametrize("config", [
    {"model_type": "t5", "num_decoder_layers": 1_000_000},
    {"model_type": "bart", "decoder_layers": 1_000_000},
    {"model_type": "encoder-decoder", "encoder": {"model_type": "bert"},
     "decoder": {"model_type": "bert", "num_hidden_layers": 1_000_000}},
    {"model_type": "bert", "hidden_size": 1_000_000_000_001, "num_attention_heads": 2},
    {"model_type": "albert", "num_hidden_groups": 0},
    {"model_type": "bert", "hidden_size": float("nan")},
])
def test_the_reported_hangs_and_crashes_are_messages(config: dict) -> None:
    with pytest.raises(ExplorerError):
        _build(config)


@settings(max_examples=25, deadline=timedelta(seconds=30), suppress_health_check=[HealthCheck.too_slow],
          derandomize=True)
@given(hostile_configs())
def test_cli_inspect_exits_0_or_2_with_one_line(tmp_path_factory, config: dict) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "config.json"
    path.write_text(json.dumps(config, allow_nan=True))
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["inspect", str(path), "--json"])
    assert code in (0, 2)
    assert code == 0 or len(err.getvalue().strip().splitlines()) == 1


@pytest.mark.parametrize("text", ["[" * 100_000, '{"model_type": "bert", "hidden_size": ' + "9" * 5000 + "}",
                                  "\xff\xfe garbage", "", "null", '{"model_type": "bert", "hidden_size": NaN}'])
def test_cli_inspect_hostile_files(tmp_path, capsys, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("latin-1", errors="replace") if text.startswith("\xff") else text.encode())
    assert main(["inspect", str(path), "--json"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_peak_rss_of_the_fuzz_run_is_reported() -> None:
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB
    FIGURES.append(f"fuzz: peak RSS of the test process {peak_mb:,.0f} MB")
    assert math.isfinite(peak_mb) and peak_mb > 0
