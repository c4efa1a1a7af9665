"""Evaluation on the user's own examples, and an embedding projector.

Task files in lm-evaluation-harness's shapes (:mod:`~explorer.evaluation.taskfile`: multiple choice, cloze, a text
for rolling perplexity), scored by local models of every family (:mod:`~explorer.evaluation.decoder`,
:mod:`~explorer.evaluation.masked`, :mod:`~explorer.evaluation.seq2seq`) and by served ones
(:mod:`~explorer.evaluation.served`); several models on the same examples with confidence intervals, per-example
rows and slices (:mod:`~explorer.evaluation.run`, :mod:`~explorer.evaluation.result`); perplexity
(:mod:`~explorer.evaluation.perplexity`); sentence or token embeddings projected by PCA, t-SNE or UMAP
(:mod:`~explorer.evaluation.projector`).
"""
