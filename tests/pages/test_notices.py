"""One notice renderer (app.ui.notice): one box and icon per kind, the text shown literally, and no page or
view that shows a library Notice any other way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import ui
from explorer.core.labels import escape_markdown
from explorer.core.notices import KINDS, Notice

ROOT = Path(__file__).resolve().parents[2]
BOXES = {"warning", "info", "error", "success", "toast", "exception"}
DRAWING = sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "app" / "views").glob("*.py")])
HOSTILE = "**bold** <b id='x'>tag</b> [link](javascript:alert(1)) `code` $x^2$ # heading\n- item"


def test_every_kind_has_one_box_and_icon() -> None:
    assert set(ui.NOTICE_STYLE) == set(KINDS)
    assert {box for box, _ in ui.NOTICE_STYLE.values()} <= {"warning", "info"}
    assert all(icon.startswith(":material/") for _, icon in ui.NOTICE_STYLE.values())


def _about_a_notice(node: ast.AST) -> bool:
    """An expression that reads a notice: ``x.text``/``x.kind``/``x.notices``, or a name like ``note``."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in ("text", "kind", "notices"):
            return True
        if isinstance(sub, ast.Name) and sub.id in ("note", "notice", "notices", "n"):
            return True
    return False


def direct_notice_boxes(source: str) -> list[str]:
    """Where a page draws a Notice with a Streamlit box itself, or keeps boxes in a table (a kind -> box map).

    >>> direct_notice_boxes("for note in r.notices:\\n    st.info(note.text)")
    ['line 2: st.info(...) shows a notice']
    >>> direct_notice_boxes("STYLE = {'truncated': st.warning}")
    ['line 1: st.warning used as a value']
    >>> direct_notice_boxes("ui.notices(r.notices)\\nst.info('Pick at least one model.')")
    []
    """
    tree = ast.parse(source)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    tabled = {id(sub) for d in ast.walk(tree) if isinstance(d, ast.Dict) for sub in ast.walk(d)}
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For | ast.comprehension) and _about_a_notice(n.iter)]
    in_loop = {id(sub) for loop in loops for sub in ast.walk(loop)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in BOXES):
            continue
        where = f"line {node.lineno}: {ast.unparse(node)}"
        if id(node) not in called:
            if id(node) in tabled:
                found.append(f"{where} used as a value")
            continue
        call = next(c for c in ast.walk(tree) if isinstance(c, ast.Call) and c.func is node)
        if id(call) in in_loop or any(_about_a_notice(a) for a in [*call.args, *(k.value for k in call.keywords)]):
            found.append(f"{where}(...) shows a notice")
    return found


@pytest.mark.parametrize("path", DRAWING, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pages_and_views_show_notices_only_through_ui_notice(path: Path) -> None:
    assert direct_notice_boxes(path.read_text(encoding="utf-8")) == [], (
        f"{path.name}: show library notices with app.ui.notice / ui.notices (one box and icon per kind, text escaped)")


def _one_notice(kind: str, text: str) -> None:
    from app import ui as page_ui
    from explorer.core.notices import Notice as PageNotice

    page_ui.notice(PageNotice(kind, text))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
def test_markdown_in_a_notice_is_shown_literally(kind: str) -> None:
    at = AppTest.from_function(_one_notice, args=(kind, HOSTILE), default_timeout=30).run()
    assert not at.exception
    box_name, icon = ui.NOTICE_STYLE[kind]
    boxes = getattr(at, box_name)
    assert len(boxes) == 1 and boxes[0].icon == icon
    body = boxes[0].value
    assert body == escape_markdown(HOSTILE)  # every markdown/HTML character escaped, nothing left to render
    assert re.search(r"(?<!\\)[*<>\[\]()`$#_-]", body) is None and "\n" not in body  # no bare markdown character
    assert body.replace("\\", "") == " ".join(HOSTILE.split())  # and the reader sees the text as typed


def test_notices_filters_by_kind_in_order() -> None:
    def script() -> None:
        from app import ui as page_ui
        from explorer.core.notices import Notice as PageNotice

        page_ui.notices([PageNotice("dropped", "one"), PageNotice("info", "two"), PageNotice("dropped", "three")],
                        ("dropped",))

    at = AppTest.from_function(script, default_timeout=30).run()
    assert not at.exception and [w.value for w in at.warning] == ["one", "three"] and not at.info


def test_the_untrained_label_is_a_notice_of_its_kind() -> None:
    assert Notice("untrained", ui.UNTRAINED_NOTE) == ui.UNTRAINED
