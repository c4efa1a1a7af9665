"""Causal interventions through nnsight: patch, ablate and steer any layer, head or neuron of a loaded model.

One module per noun:

- :mod:`~explorer.interventions.engine`: nnsight wrapping a *view* of a shared loaded model (never the model itself),
  one per model, a lock per trace.
- :mod:`~explorer.interventions.stacks`: which stack is acted on (an encoder-decoder's encoder by default), depth.
- :mod:`~explorer.interventions.traces`: the nnsight traces: read a site of every layer, or replace cells of a batch.
- :mod:`~explorer.interventions.prompts` / :mod:`~explorer.interventions.pair`: prompts as each family reads them;
  a clean/corrupted pair checked for patching.
- :mod:`~explorer.interventions.metrics`: logit difference, probability, KL; the 0 = corrupted, 1 = clean scale.
- :mod:`~explorer.interventions.plan`: a grid's forwards and bytes, before it runs.
- :mod:`~explorer.interventions.patching` -> :class:`~explorer.interventions.grid.PatchGrid`: activation patching.
- :mod:`~explorer.interventions.components` / :mod:`~explorer.interventions.ablation`: zero or mean ablation.
- :mod:`~explorer.interventions.ranking`: every head by ablation effect, beside Michel et al.'s importance.
- :mod:`~explorer.interventions.steering`: activation addition, generations with and without, same seed.
- :mod:`~explorer.interventions.across`: one pair across families on a relative-depth axis.
- :mod:`~explorer.interventions.remote`: the same grid on NDIF's hosted models (not verifiable here: no internet).
- :mod:`~explorer.interventions.models`: the models offered and how they load (served models refused in words).

Modules import nnsight (and so torch and transformers) lazily or at their top: import the one you need.
"""
