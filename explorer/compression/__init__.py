"""The compression lab: what quantization and pruning buy and cost, measured on real models.

- :mod:`explorer.compression.offer`: the one list of methods as offered (the CLI's help, the page, the errors);
- :mod:`explorer.compression.methods`: the methods (casts, int8, weight-only, magnitude and head pruning),
  each applied to a deep copy;
- :mod:`explorer.compression.heads`: head importance and structured head pruning;
- :mod:`explorer.compression.measure`: size on disk and in memory, latency and throughput;
- :mod:`explorer.compression.quality`: agreement with the unmodified model on bundled text;
- :mod:`explorer.compression.study`: one model through several methods, the original measured once;
- :mod:`explorer.compression.result`: the frozen result, with every copy's ratios to the original.
"""
