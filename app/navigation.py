"""The pages of the app, by sidebar section (data only: importing this runs nothing)."""

from __future__ import annotations

# (file, title, icon, url path); grouped by section in the sidebar.
SECTIONS: dict[str, list[tuple[str, str, str, str]]] = {
    "Architecture": [
        ("home.py", "Overview", ":material/home:", "home"),
        ("architecture.py", "Architecture explorer", ":material/account_tree:", "architecture"),
        ("forward.py", "Forward pass", ":material/conveyor_belt:", "forward"),
        ("positions.py", "Positions & KV cache", ":material/pin_drop:", "positions"),
        ("compare.py", "Compare variants", ":material/compare_arrows:", "compare"),
        ("results.py", "Published results", ":material/leaderboard:", "results"),
    ],
    "Pretraining": [
        ("tokenization.py", "Tokenizers", ":material/text_fields:", "tokenizers"),
        ("objectives.py", "Objectives", ":material/school:", "objectives"),
        ("mechanisms.py", "Mechanisms", ":material/functions:", "mechanisms"),
        ("lab.py", "Pretraining lab", ":material/model_training:", "lab"),
    ],
    "Attention": [
        ("attention_patterns.py", "Sparse patterns", ":material/grid_on:", "patterns"),
        ("attention_maps.py", "Attention maps", ":material/visibility:", "attention"),
    ],
    "Live models": [
        ("models.py", "Models & weights", ":material/download:", "models"),
        ("fill_mask.py", "Fill-mask", ":material/edit_note:", "fill-mask"),
        ("electra.py", "Replaced tokens (ELECTRA)", ":material/find_replace:", "electra"),
        ("spans.py", "Spans & QA", ":material/short_text:", "spans"),
        ("decoding.py", "Decoding lab", ":material/auto_awesome:", "decoding"),
        ("similarity.py", "Sentence similarity", ":material/join_inner:", "similarity"),
        ("why.py", "Why this prediction", ":material/psychology_alt:", "why"),
        ("compression.py", "Compression lab", ":material/compress:", "compression"),
        ("interventions.py", "Interventions", ":material/science:", "interventions"),
        ("features.py", "Features", ":material/category:", "features"),
        ("evaluate.py", "Evaluate", ":material/fact_check:", "evaluate"),
    ],
}
