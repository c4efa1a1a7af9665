"""Every live path per device and dtype: the same test bodies on the CPU (CI) and on CUDA (a GPU machine).

``PLACES`` parametrizes a test over (device, dtype). The CUDA ones carry ``pytest.mark.gpu`` and skip without a
GPU, with :data:`NO_GPU` as the reason; so on CI the CPU half runs (proving each test can pass and fail) and
on a GPU machine both do. ``make test-gpu`` runs ``pytest -m gpu -rs``. Tolerances per dtype live in
:data:`TOLERANCE`, the one place they are stated.
"""

from __future__ import annotations

import pytest
import torch

CUDA = torch.cuda.is_available()
NO_GPU = "needs a CUDA GPU: torch.cuda.is_available() is False"
_ON_GPU = [pytest.mark.gpu, pytest.mark.skipif(not CUDA, reason=NO_GPU)]

# Absolute tolerance of a value computed twice on the same weights in one dtype (the library's path against the
# reference's), for probabilities / cosines / logits of order 1. float32: kernels of another shape or device
# round differently (~1e-6); float16 keeps 11 bits of precision, bfloat16 8, so bfloat16's steps are 8 times
# float16's: 8 x 5e-3 is 4e-2 (a cached decoding step against a full forward differed by 0.0303 on an H200).
TOLERANCE = {torch.float32: 1e-4, torch.float16: 5e-3, torch.bfloat16: 4e-2}
# CPU against CUDA, each in its own dtype: float32 against float32, a half dtype against the CPU's float32.
AGREEMENT = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def _place(device: str, dtype: torch.dtype):
    name = f"{device}-{str(dtype).removeprefix('torch.')}"
    return pytest.param((device, dtype), id=name, marks=_ON_GPU if device == "cuda" else ())


# bfloat16 on the CPU is cheap on these tiny models: half precision is checked on CI too.
PLACES = [_place("cpu", torch.float32), _place("cpu", torch.bfloat16),
          _place("cuda", torch.float32), _place("cuda", torch.bfloat16), _place("cuda", torch.float16)]
DEVICES = [pytest.param("cpu", id="cpu"), pytest.param("cuda", id="cuda", marks=_ON_GPU)]
CUDA_HALF = [_place("cuda", torch.bfloat16), _place("cuda", torch.float16)]  # CPU-vs-CUDA agreement


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Any test marked gpu (a CUDA-only test too, not only a parameter) skips with the reason without one."""
    if item.get_closest_marker("gpu") is not None and not CUDA:
        pytest.skip(NO_GPU)


@pytest.fixture(scope="session")
def peaked_dir(tmp_path_factory):
    """``peaked_dir(kind)``: a tiny model of ``kind`` with a peaked head, saved once per session."""
    from tests.gpu.peaked import save_peaked

    root, made = tmp_path_factory.mktemp("peaked"), {}

    def get(kind: str):
        if kind not in made:
            made[kind] = save_peaked(kind, root / kind)
        return made[kind]

    return get
