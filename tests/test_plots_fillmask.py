"""explorer.plots.fillmask: top-k bars per model and ELECTRA's strip keep user text as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.plots import fillmask as plots
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import discriminator as dsc
from explorer.tasks import fillmask as fm
from tests.tiny_models import save_tiny


@pytest.fixture(scope="module")
def dirs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plots-fm")
    return {k: save_tiny(k, root / k) for k in ("bert", "roberta", "electra-generator", "electra-discriminator")}


def _lm(dirs, kind: str):
    task = "electra-discriminator" if kind == "electra-discriminator" else "masked-lm"
    return load_model(resolve(str(dirs[kind])), task)


def test_figures_escape_user_text(dirs) -> None:
    fills = [fm.fill_one(_lm(dirs, k), "<b>bold</b> [MASK] <script>x</script>", 4) for k in ("bert", "roberta")]
    fig = plots.topk_figure(fills, 0)
    assert len(fig.data) == 2 and all(len(t.y) == 4 for t in fig.data)
    assert "<b>" not in str(fig.to_dict()) or "&lt;b&gt;" in str(fig.to_dict())
    r = dsc.electra_replaced(_lm(dirs, "electra-generator"), _lm(dirs, "electra-discriminator"),
                            "<script>alert(1)</script> the cat", 0.2)
    strip = plots.replaced_strip(r)
    labels = strip.layout.xaxis.ticktext
    assert len(labels) == len(r.tokens) and not any("<" in t for t in labels)




@pytest.mark.parametrize("n", [1, 2, 4, 5, 10, 13])
def test_any_number_of_models_lays_out(dirs, n: int) -> None:
    fill = fm.fill_one(_lm(dirs, "bert"), "the [MASK] sat", 3)
    fig = plots.topk_figure([fill] * n, 0)  # 10+ columns in one row made plotly raise
    rows, cols = plots.grid(n)
    assert len(fig.data) == n and rows * cols >= n > (rows - 1) * cols
    assert cols <= plots.MAX_COLUMNS and fig.layout.height > 0
