"""explorer.architecture.knobs: the architecture page's knobs name real settings, start where the config is,
and only the changed ones become overrides that build.apply_overrides accepts."""

from __future__ import annotations

import pytest

from explorer.architecture import build, compare, knobs


def test_every_knob_is_a_build_setting_and_a_summary_field() -> None:
    summary = compare.config_summary(build.make_config("bert-base"))
    for name, _label, field in knobs.KNOB_FIELDS:
        assert name in build.KNOBS
        assert field is None or field in summary


@pytest.mark.parametrize("key", ["bert-base", "t5-base", "albert-base", "gpt2"])
def test_start_values_are_the_configs_and_unchanged_knobs_override_nothing(key: str) -> None:
    summary = compare.config_summary(build.make_config(key))
    items = knobs.knobs(summary)
    assert [k.start for k in items[:5]] == [summary[f] for f in ("layers", "hidden", "heads", "ffn", "vocab")]
    assert knobs.overrides(items, [k.start for k in items]) == {}


def test_a_changed_knob_builds_the_changed_model() -> None:
    items = knobs.knobs(compare.config_summary(build.make_config("bert-base")))
    values = [4 if k.name == "num_hidden_layers" else k.start for k in items]
    changed = knobs.overrides(items, values)
    assert changed == {"num_hidden_layers": 4}
    assert build.make_config("bert-base", changed).num_hidden_layers == 4


def test_an_uploaded_config_starts_every_knob_at_zero_keep() -> None:
    items = knobs.knobs({})
    assert [k.start for k in items] == [0] * len(knobs.KNOB_FIELDS)
    assert knobs.overrides(items, [0] * len(items)) == {}


def test_odd_summary_values_never_start_a_knob() -> None:
    items = knobs.knobs({"layers": True, "hidden": 7.5, "heads": "12", "ffn": None})
    assert [k.start for k in items[:4]] == [0, 0, 0, 0]
