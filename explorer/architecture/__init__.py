"""Architecture from configurations, no weights: the variant catalog, building a model from a config,
its layer tree and parameter breakdown, FLOPs and memory cost, the comparator (with each variant's pretraining
budget as its paper reports it), the census of every variant and who derives from whom."""
