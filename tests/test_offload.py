"""A checkpoint larger than the memory budget loads over CPU and disk and computes the same outputs."""

from __future__ import annotations

import pytest
import torch

from explorer.architecture.build import BUILD_LOCK
from explorer.core.errors import ExplorerError
from explorer.runtime.offload import budget, load_offloaded
from explorer.runtime.resolve import resolve


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A small-vocabulary Gemma-3 of ~1.3 MB whose layers, not its embedding, hold most weights."""
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    config = Gemma3TextConfig(vocab_size=256, hidden_size=64, intermediate_size=256, num_hidden_layers=4,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=32, sliding_window=4,
                              max_position_embeddings=64, bos_token_id=0, eos_token_id=1, pad_token_id=0)
    with BUILD_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Gemma3ForCausalLM(config).eval()
    path = tmp_path_factory.mktemp("big")
    model.save_pretrained(path)
    return path


def test_offloaded_model_equals_the_normal_load(checkpoint, tmp_path):
    from transformers import AutoModelForCausalLM

    spread = load_offloaded(checkpoint, "causal-lm", tmp_path / "offload", max_memory={"cpu": 600_000})
    assert {"cpu", "disk"} <= set(spread.placement())  # the budget forced part of it onto disk
    with BUILD_LOCK:
        whole = AutoModelForCausalLM.from_pretrained(str(checkpoint)).eval()
    x = torch.tensor([[0, 5, 9, 200, 17, 3, 3, 8]])  # (1, T) longer than the sliding window
    with torch.inference_mode():
        assert torch.allclose(spread.model(input_ids=x).logits, whole(input_ids=x).logits, atol=1e-5)


def test_budget_lists_gpus_then_cpu():
    assert budget([24, 24], 64) == {0: "24GiB", 1: "24GiB", "cpu": "64GiB"}


def test_pickle_only_or_missing_checkpoint_is_refused(tmp_path):
    (tmp_path / "pytorch_model.bin").write_bytes(b"x")
    with pytest.raises(ExplorerError, match="safetensors"):
        load_offloaded(tmp_path, "causal-lm", tmp_path / "off")
    with pytest.raises(ExplorerError, match="safetensors"):
        load_offloaded(tmp_path / "nowhere", "causal-lm", tmp_path / "off")


# --- load_model: a real checkpoint over the single-device budget is offloaded instead of refused ---------------

X = torch.tensor([[0, 5, 9, 200, 17, 3, 3, 8]])  # (1, T) longer than the sliding window (4)


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An empty model cache and an explorer cache dir of the test's own (offload folders go there)."""
    from explorer.runtime import modelcache

    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EXPLORER_MEMORY_CAP_GB", raising=False)
    modelcache.clear_cache()
    yield tmp_path / "cache"
    modelcache.clear_cache()


def _logits(lm) -> torch.Tensor:
    from explorer.runtime.offload import input_device

    with torch.inference_mode():
        return lm.model(input_ids=X.to(input_device(lm.model))).logits.float().cpu()


def _normal_load(path, monkeypatch):
    from explorer.runtime import loading, modelcache

    monkeypatch.delenv("EXPLORER_MEMORY_CAP_GB", raising=False)
    modelcache.clear_cache()
    return loading.load_model(resolve(str(path)), "causal-lm", device="cpu")


# The tests below are about the CPU and the disk (float32, exact logits): they pin the CPU, else on a GPU
# machine the cap would place part of the model on the GPU in half precision. tests/gpu/test_offload.py
# spreads one over GPU, CPU and disk.


def test_tiny_gemma_over_the_budget_loads_from_disk_with_the_same_logits(fresh, monkeypatch, tmp_path):
    from explorer.runtime import loading
    from tests.tiny_gemma import save_tiny_gemma

    path = save_tiny_gemma(tmp_path / "gemma")  # ~1.6M parameters: ~7 MB as float32 with the overhead
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.003")
    lm = loading.load_model(resolve(str(path)), "causal-lm", device="cpu")
    [note] = lm.notices
    assert note.kind == "offload" and "too big for one device" in note.text and "disk" in note.text
    assert "disk" in set(lm.model.hf_device_map.values()) and (lm.device, lm.dtype) == ("cpu", "float32")
    assert loading.load_model(resolve(str(path)), "causal-lm", device="cpu") is lm  # kept in the shared model cache
    [folder] = (fresh / "offload").iterdir()  # a per-model folder under the explorer cache
    assert folder.name.startswith("gemma-")
    spread = _logits(lm)
    whole = _normal_load(path, monkeypatch)
    assert whole is not lm and not whole.notices
    assert torch.allclose(spread, _logits(whole), atol=1e-5)
    # everything on disk: model.device is "meta", yet the fill-in scorer and the next-token view run
    from explorer.tasks.causal.scoring import PrefixScorer, naive_scores
    from explorer.tasks.generation.nexttoken import forward_last

    ids = lm.tokenizer("The cat sat on the")["input_ids"]
    assert lm.model.device.type == "meta"
    from explorer.runtime.modelcache import model_bytes

    assert model_bytes(lm.model) < model_bytes(whole.model) / 10  # the cache counts what is in memory
    scorer = PrefixScorer(lm.model, ids[:3])
    assert scorer.scores([ids[3:4]], ids[4:]) == pytest.approx(naive_scores(whole.model, ids[:3], [ids[3:4]], ids[4:]),
                                                               abs=1e-4)
    last, _ = forward_last(lm.model, torch.tensor([ids]))
    assert torch.allclose(last, forward_last(whole.model, torch.tensor([ids]))[0], atol=1e-5)


def test_over_the_budget_splits_cpu_and_disk_and_says_so(fresh, checkpoint, monkeypatch):
    from explorer.runtime import loading
    from explorer.tokenization import load_tokenizer

    load_tokenizer("gpt2").save_pretrained(checkpoint)  # load_model wants a tokenizer; X uses ids < 256 only
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.0006")  # the checkpoint is ~1.3 MB: embedding fits, layers not
    lm = loading.load_model(resolve(str(checkpoint)), "causal-lm", device="cpu")
    assert {"cpu", "disk"} <= set(lm.model.hf_device_map.values())
    assert "on the CPU" in lm.notices[0].text and "streamed from disk (slow)" in lm.notices[0].text
    assert torch.allclose(_logits(lm), _logits(_normal_load(checkpoint, monkeypatch)), atol=1e-5)


def test_within_the_budget_loads_as_before(fresh, tmp_path):
    from explorer.runtime import loading
    from tests.tiny_gemma import save_tiny_gemma

    lm = loading.load_model(resolve(str(save_tiny_gemma(tmp_path / "gemma"))), "causal-lm", device="cpu")
    assert lm.notices == () and getattr(lm.model, "hf_device_map", None) is None and lm.device == "cpu"
    assert not (fresh / "offload").exists()


def test_over_the_budget_and_not_offloadable_is_refused_with_why(fresh, monkeypatch, tmp_path):
    from explorer.runtime import loading, offload
    from tests.tiny_gemma import save_tiny_gemma

    path = save_tiny_gemma(tmp_path / "gemma")
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.003")
    monkeypatch.setattr(offload, "MAX_OFFLOAD_PARAMS", 1_000_000)
    with pytest.raises(ExplorerError, match=r"The checkpoint in .* needs about .* beyond this app's limit"):
        loading.load_model(resolve(str(path)), "causal-lm")
    monkeypatch.setattr(offload, "MAX_OFFLOAD_PARAMS", 10**12)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(offload, "load_offloaded", disk_full)
    with pytest.raises(ExplorerError, match="cannot be offloaded to disk.*No space left on device"):
        loading.load_model(resolve(str(path)), "causal-lm")
    assert not any((fresh / "offload").glob("*"))  # the partial folder is removed


def test_summary_lists_gpus_then_cpu_then_disk():
    from explorer.runtime.offload import Offloaded

    mixed = Offloaded(torch.nn.Identity(), {"a": "cpu", "b": "disk", "c": "disk", "d": "0"}, "x")
    assert mixed.summary() == "1 part on GPU 0, 1 part on the CPU, 2 parts streamed from disk (slow)"
    assert mixed.device == "cuda"
    whole = Offloaded(torch.nn.Identity(), {"": "disk"}, "x")
    assert (whole.summary(), whole.device) == ("all of it streamed from disk (slow)", "cpu")


def test_offload_folders_are_per_checkpoint_task_and_dtype(fresh, checkpoint):
    from explorer.runtime.offload import offload_dir_for

    a = offload_dir_for(checkpoint, "causal-lm", torch.float32)
    assert a.parent == fresh / "offload" and a == offload_dir_for(checkpoint, "causal-lm", torch.float32)
    base32, base16 = (offload_dir_for(checkpoint, "base", dtype) for dtype in (torch.float32, torch.float16))
    assert len({a, base32, base16}) == 3


def test_offloaded_load_honours_the_chosen_dtype(fresh, checkpoint, monkeypatch):
    from explorer.runtime import loading
    from explorer.tokenization import load_tokenizer

    load_tokenizer("gpt2").save_pretrained(checkpoint)
    # over the budget (counted in float32) and, even at bfloat16's half size, too big for the CPU share alone
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.0003")
    lm = loading.load_model(resolve(str(checkpoint)), "causal-lm", device="cpu", dtype="bfloat16")
    assert "disk" in set(lm.model.hf_device_map.values()) and (lm.device, lm.dtype) == ("cpu", "bfloat16")
    in_memory = {p.dtype for p in lm.model.parameters() if p.device.type != "meta"}
    assert in_memory == {torch.bfloat16}
    [folder] = (fresh / "offload").iterdir()  # the dtype is part of the offload folder's name hash
    assert "bfloat16" not in folder.name and folder.is_dir()
    whole = _normal_load(checkpoint, monkeypatch)  # float32, in memory
    probs = [torch.softmax(x, -1) for x in (_logits(lm), _logits(whole))]
    assert torch.allclose(probs[0].sum(-1), torch.ones(1, X.shape[1]), atol=1e-3)
    assert (probs[0] - probs[1]).abs().max() < 0.05  # bf16 rounding only


def test_a_bfloat16_load_is_admitted_where_its_two_bytes_a_parameter_fit(fresh, monkeypatch, tmp_path):
    """The budget counts the chosen dtype: the tiny Gemma (~1.6M parameters) takes ~7 MB in float32, ~3.5 MB in
    bfloat16; under a 5 MB cap float32 spreads to disk and bfloat16 loads whole."""
    from explorer.runtime import loading
    from tests.tiny_gemma import save_tiny_gemma

    path = save_tiny_gemma(tmp_path / "gemma")
    monkeypatch.setenv("EXPLORER_MEMORY_CAP_GB", "0.005")
    half = loading.load_model(resolve(str(path)), "causal-lm", device="cpu", dtype="bfloat16")
    assert half.notices == () and getattr(half.model, "hf_device_map", None) is None and half.dtype == "bfloat16"
    full = loading.load_model(resolve(str(path)), "causal-lm", device="cpu", dtype="float32")
    assert full.notices[0].kind == "offload" and "disk" in set(full.model.hf_device_map.values())


def test_a_cuda_bfloat16_checkpoint_is_admitted_by_the_gpu_budget(monkeypatch):
    """Injected device facts: 100 GB of RAM, a GPU with 10 GB free (7 GB budget). 3B parameters fit in bfloat16
    (6.6 GB) and load normally; in float32 (13.2 GB) they go to the GPU/CPU/disk split."""
    from explorer.architecture import membudget
    from explorer.runtime import offload

    monkeypatch.delenv("EXPLORER_MEMORY_CAP_GB", raising=False)
    monkeypatch.setattr(membudget, "_available_ram", lambda: 100 * 10**9)
    monkeypatch.setattr(membudget, "_available_gpu", lambda device: 10 * 10**9)
    spread: list[torch.dtype] = []
    monkeypatch.setattr(offload, "load_over_budget", lambda path, task, *, device, dtype, **kw: spread.append(dtype))
    args = ("ckpt", ("safetensors",), "causal-lm", 3_000_000_000)
    assert offload.load_if_over_budget(*args, what="x", device="cuda", dtype=torch.bfloat16) is None
    assert spread == []
    offload.load_if_over_budget(*args, what="x", device="cuda", dtype=torch.float32)
    assert spread == [torch.float32]
    monkeypatch.setattr(offload, "MAX_OFFLOAD_PARAMS", 1_000_000_000)  # not offloadable: refused, naming the GPU
    with pytest.raises(ExplorerError, match=r"13\.2 GB .* in float32.* allows 7\.0 GB \(GPU: 70% of the 10\.0 GB"):
        offload.load_if_over_budget(*args, what="x", device="cuda", dtype=torch.float32)
