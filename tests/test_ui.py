"""app.ui helpers that need no running app."""

from __future__ import annotations

from app.ui import markdown_safe


def test_markdown_is_escaped_outside_code_spans_only() -> None:
    text = "No folder /tmp/*a*_b_ with $x$ <b>: run `python -m explorer download my_key`"
    out = markdown_safe(text)
    assert "\\*a\\*\\_b\\_" in out and "\\$x\\$" in out and "\\<b\\>" in out
    assert out.endswith("`python -m explorer download my_key`")
