"""Occlusion: each token left out in turn, its score the fall of the explained number (forwards only, anytime)."""

from __future__ import annotations

from explorer.explain.methods import Method, Scores, Work


def _compute(work: Work) -> Scores:
    from explorer.explain import occlusion  # torch: only when a method runs

    per_batch = max(1, work.cost.rows // len(work.frame.rows))
    done = occlusion.occlusion(work.loaded.model, work.frame, per_batch, work.progress, work.span)
    return done.scores, done.output, None, None, done.notices, None


METHOD = Method("occlusion", "occlusion (leave one token out)", 4, signed=True, backward=False, anytime=True,
                stepped=False, served=True, typical_flops=27e9, passes=lambda shown, steps: shown + 1.0,
                copies=lambda shown, steps: shown, compute=_compute)
