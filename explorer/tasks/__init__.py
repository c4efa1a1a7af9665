"""Live tasks on loaded models: fill-mask (one prompt or many), span infilling, question answering,
sentence similarity and ColBERT, ELECTRA's replaced-token detection, decoders' scoring and generation,
and real attention maps."""
