"""The feature lab: sparse dictionaries (TopK and JumpReLU sparse autoencoders, transcoders) trained on a model's
activations, measured against the model, read from SAELens's and Gemma Scope's files, and used (dashboards, a
text's active features, a feature clamped). Start with :mod:`explorer.features.pipeline`."""
