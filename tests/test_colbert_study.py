"""explorer.tasks.colbert.study: one codec per bit width on a collection; storage and score change reported."""

from __future__ import annotations

import json

import pytest

from explorer.runtime.resolve import resolve
from explorer.tasks import colbert as cb
from explorer.tasks.colbert import compression
from explorer.tasks.colbert import encoder as colbert_encoder

DOCS = ["The Eiffel Tower is in Paris.", "Stock markets fell sharply today.", "A kitten sleeps on a rug.",
        "Paris is the capital of France.", "Dogs bark at night."]


@pytest.fixture(scope="module")
def study(bundled_encoder):
    from explorer.runtime.loading import load_model

    encoder = colbert_encoder.make_encoder(load_model(resolve("sentence-bert")))
    return cb.compression_study(encoder, "Where is the Eiffel Tower?", DOCS, k=8)


def test_compression_study_reports_both_bit_widths(study) -> None:
    assert [r.bits for r in study.reports] == [1, 2] and study.k == 8 and study.dim == 384
    one, two = study.reports
    assert one.bytes_per_token == 4 + 48 and two.bytes_per_token == 4 + 96
    assert one.ratio_vs_fp16 == round(compression.storage_ratio(384, 1), 3) == pytest.approx(768 / 52, abs=1e-3)
    assert one.mean_cosine < two.mean_cosine <= 1.0
    assert two.max_abs_score_change <= one.max_abs_score_change + 1e-6
    assert len(two.scores) == len(DOCS) and -1.0 <= two.kendall_tau <= 1.0


def test_the_centroid_table_is_counted_apart(study) -> None:
    assert study.centroid_table_bytes == study.k * study.dim * 2  # fp16, paid once per index
    assert study.n_tokens > len(DOCS) and study.top_k == 3 and study.stand_in


def test_to_dict_is_json(study) -> None:
    d = json.loads(json.dumps(study.to_dict()))
    assert d["reports"][0]["bits"] == 1 and "ratio_vs_fp32" not in d["reports"][0]
