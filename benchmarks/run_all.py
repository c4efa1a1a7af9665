"""Run every benchmark script in this folder, one process each (results in benchmarks/results/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"== {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=HERE.parent).returncode:
            failed.append(script.name)
    if failed:
        print("failed:", ", ".join(failed))
    sys.exit(1 if failed else 0)
