"""What the papers report and how we reproduce it: published benchmark tables, GLUE across papers,
pretraining budgets, scaling laws, DistilBERT's speed table, and the mechanisms papers introduced
(DeBERTa's disentangled attention, distillation, text-to-text)."""
