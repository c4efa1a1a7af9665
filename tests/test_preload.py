"""app.preload: a page's imports read from its source and made once, one page at a time, so that two first
visitors at once on a fresh server do not import the same modules in two threads (Why this prediction failed
with "cannot import name 'BertTokenizer'" beside Interventions)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from app import preload

ROOT = Path(__file__).resolve().parents[1]


def test_a_pages_imports_are_read_from_its_source_without_running_it(tmp_path) -> None:
    page = tmp_path / "page.py"
    page.write_text("from __future__ import annotations\nimport json\nfrom app.caches import explain as cache\n"
                    "from explorer.core.limits import ECHO_CHARS\nraise SystemExit('a page is never run here')\n")
    assert preload.imported_by(page) == ("json", "app.caches", "app.caches.explain", "explorer.core.limits",
                                         "explorer.core.limits.ECHO_CHARS")
    preload.ensure(page)  # a name that is not a module (ECHO_CHARS) is skipped, the page is not run
    assert page in preload._DONE


def test_every_page_of_the_navigation_is_read() -> None:
    from app.main import PAGE_FILES  # noqa: PLC0415  (importing the entry builds nothing outside Streamlit)

    assert PAGE_FILES[""].name == "home.py" and PAGE_FILES["why"].name == "why.py"
    for path in PAGE_FILES.values():
        assert path.is_file() and "streamlit" in preload.imported_by(path)


def test_two_pages_first_imported_at_once_in_a_fresh_process_both_load() -> None:
    """The race needs a process that has imported nothing yet: two threads ensure two pages' imports at once."""
    script = textwrap.dedent("""
        import sys, threading
        from pathlib import Path
        from app import preload
        errors = []
        def go(page):
            try:
                preload.ensure(Path("pages") / page)
            except Exception as err:  # what a visitor's page would have shown
                errors.append(f"{page}: {err!r}")
        threads = [threading.Thread(target=go, args=(p,)) for p in ("why.py", "interventions.py", "evaluate.py")]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print("errors:", errors)
        sys.exit(1 if errors else 0)
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
