"""``python -m explorer ...``: see explorer/cli/__init__.py."""

from explorer.cli import main

raise SystemExit(main())
