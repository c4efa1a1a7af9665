"""SmoothGrad (Smilkov et al. 2017) of gradient x input: the gradient x input of :data:`SAMPLES` copies of the text,
each shown token's embedding moved by Gaussian noise of :data:`NOISE` times the embeddings' range, averaged. A single
gradient is noisy from token to token; the average over a small neighbourhood is smoother. Signed; not complete
(nothing makes the scores sum to the explained number).

A token's noise is the same in every row it appears in (the text beside a target and beside a foil), and only shown
tokens move (not the special tokens or the target), so a contrast is exactly the target's scores minus the foil's,
as for gradient x input. The noise comes from a generator seeded by :data:`SEED`: the same question, the same scores.
"""

from __future__ import annotations

from explorer.explain.methods import Method, Scores, Work

SAMPLES = 16
NOISE = 0.1  # Smilkov et al. found 10-20% of the input's range best
SEED = 0


def smoothed(work: Work, samples: int = SAMPLES, noise: float = NOISE) -> list[float]:
    """Each shown token's SmoothGrad x input score (``noise`` 0: exactly gradient x input)."""
    import torch  # torch: only when a method runs

    from explorer.explain.scorer import Embedder, batch_of, score
    from explorer.runtime.offload import input_device

    model, frame = work.loaded.model, work.frame
    template = batch_of([frame], input_device(model))
    rows, width = template.ids.shape  # (S, T)
    emb = Embedder(model)(template.ids).detach()  # (S, T, d)
    spread = float(emb.max() - emb.min()) * noise
    draws = torch.randn(samples, len(frame.shown), emb.shape[-1], generator=torch.Generator().manual_seed(SEED))
    total = torch.zeros(len(frame.shown), dtype=torch.float64)
    per_batch = max(1, min(samples, work.cost.rows // max(1, rows)))
    for start in range(0, samples, per_batch):
        moved = emb.unsqueeze(0).repeat(min(per_batch, samples - start), 1, 1, 1)  # (B, S, T, d)
        for k, shown in enumerate(frame.shown):
            for r, i in shown.places:
                moved[:, r, i] += spread * draws[start:start + moved.shape[0], k].to(emb)
        with torch.enable_grad():
            moved.requires_grad_(True)
            value = score(model, template.tiled(moved.shape[0]), moved.reshape(-1, width, emb.shape[-1]))
            (grad,) = torch.autograd.grad(value.sum(), moved)
        product = (grad * moved).detach().double().sum(-1)  # (B, S, T)
        total += torch.stack([sum((product[:, r, i] for r, i in s.places), torch.zeros(product.shape[0],
                              dtype=torch.float64)) for s in frame.shown], dim=-1).sum(0).cpu()
    return (total / samples).tolist()


def _compute(work: Work) -> Scores:
    from explorer.explain.scorer import values

    output = float(values(work.loaded.model, [work.frame])[0])
    return list[float | None](smoothed(work)), output, None, None, (), None


METHOD = Method("smoothgrad", f"SmoothGrad (gradient x input over {SAMPLES} noisy copies)", 3, signed=True,
                backward=True, anytime=False, stepped=False, served=False, typical_flops=60e9,
                passes=lambda shown, steps: 3.0 * SAMPLES + 1, copies=lambda shown, steps: SAMPLES,
                compute=_compute)
