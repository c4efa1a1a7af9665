"""What the papers report and how we reproduce it: published benchmark tables, GLUE across papers,
scaling laws (over the pretraining budgets of ``explorer.architecture.budgets``), DistilBERT's speed table,
and the mechanisms papers introduced (DeBERTa's disentangled attention, distillation, text-to-text)."""
