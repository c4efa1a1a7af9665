"""Why this prediction: every layer's guess (the lens) and every input token's share (attribution).

One noun per module:

- :mod:`~explorer.explain.task`: what a model is asked, from its kind and the text (next token, a masked
  position, a decoder's fill-in, a span, a sentence pair's similarity) and how it loads;
- :mod:`~explorer.explain.target`: the text checked and the target (or foil) as token ids, said in words;
- :mod:`~explorer.explain.frame` / :mod:`~explorer.explain.framer`: the model's input rows, the tokens shown and
  the log-probabilities summed, and how each task builds them;
- :mod:`~explorer.explain.scorer`: the explained number from input embeddings, for a batch of inputs;
- :mod:`~explorer.explain.methods`: one record per attribution method (what it needs, its cost, its run), one file
  each; :mod:`~explorer.explain.gradients`, :mod:`~explorer.explain.integrated`, :mod:`~explorer.explain.occlusion`,
  :mod:`~explorer.explain.served`: their computations (the served one through an engine's scoring);
- :mod:`~explorer.explain.cost`: what an attribution costs, estimated before any work, and its batches;
- :mod:`~explorer.explain.attribution`: the result and the one entry point of every method;
- :mod:`~explorer.explain.statistics`: top-k, rank, entropy and KL of a distribution;
- :mod:`~explorer.explain.lens`: the logit lens (and the tuned lens's readings through it);
- :mod:`~explorer.explain.translator`: the tuned lens's affine translators, saved beside the model;
- :mod:`~explorer.explain.tuning`: training them (KL to the final distribution) and their held-out KL;
- :mod:`~explorer.explain.background`: that training as a background job of the Lab's scheduler.
"""
