"""The nnsight engine: it reads what plain forward hooks read (decoder, encoder, encoder-decoder, ALBERT's shared
layer, the bundled MiniLM), wraps a view of the shared model without changing it, and keeps two sessions apart."""

from __future__ import annotations

import threading
import warnings

import nnsight
import pytest
import torch

from explorer.internals import sites
from explorer.interventions import stacks, traces
from explorer.interventions.engine import engine_for, view_copy
from explorer.interventions.prompts import Prompt
from explorer.runtime.resolve import resolve
from tests.tiny_families import inputs, tiny_family

# a decoder, two encoders (one with a shared layer), two encoder-decoders
KEYS = ("gemma3-270m", "gpt2", "bert-base", "albert-base", "t5-small", "bart-base")


@pytest.fixture(scope="module")
def tiny() -> dict[str, torch.nn.Module]:
    return {key: tiny_family(key) for key in KEYS}


def _hooked(model: torch.nn.Module, paths: list[str], x: dict, *, read_input: bool = False) -> list[torch.Tensor]:
    """Plain forward hooks: each path's first output (or input) in call order."""
    seen: list[torch.Tensor] = []

    def post(_m, args, output):
        seen.append(sites.first(args[0] if read_input else output).detach().clone())

    modules = {id(m): m for m in (sites.module(model, p) for p in paths)}
    handles = [m.register_forward_hook(post) for m in modules.values()]
    try:
        with torch.no_grad():
            model(**x)
    finally:
        for h in handles:
            h.remove()
    return seen


def _prompt(model: torch.nn.Module, x: dict) -> Prompt:
    ids = tuple(int(i) for i in x["input_ids"][0])
    decoder = tuple(int(i) for i in x["decoder_input_ids"][0]) if "decoder_input_ids" in x else None
    return Prompt("", ids, decoder, len(decoder or ids) - 1, len(ids), "", "", "")


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("site", ["resid", "attn", "mlp", "heads"])
def test_nnsight_reads_what_plain_hooks_read(tiny, key: str, site: str) -> None:
    model = tiny[key]
    engine = engine_for(model)
    for stack in ("encoder", "decoder") if key in ("t5-small", "bart-base") else (None,):
        s, _ = stacks.stack_sites(engine.model, stack)
        x = inputs(model)
        prompt = _prompt(model, x)
        with engine.session():
            feed = traces.batch_inputs(engine, prompt, 1)
            acts, logits = traces.capture(engine, s, site, feed, traces.readout_index(prompt, feed))
        paths = [traces.site_path(s, site, i) for i in range(s.layers)]
        hooked = _hooked(model, paths, x, read_input=site == "heads")
        assert len(acts) == len(hooked) == s.layers
        for ours, theirs in zip(acts, hooked, strict=True):
            assert torch.equal(ours, theirs[0])
        with torch.no_grad():  # the same inputs through the shared model, no nnsight on its path
            assert torch.equal(logits, model(**feed).logits[0, -1])


def test_nnsight_reads_the_bundled_minilm_as_hooks_do() -> None:
    from explorer.runtime import loading

    loaded = loading.load_model(resolve("sentence-bert"), "base", device="cpu")  # a BertModel: no head, still readable
    engine = engine_for(loaded.model)
    s = engine.sites
    x = dict(loaded.tokenizer("Patching needs a model's insides.", return_tensors="pt"))
    with engine.session(), engine.envoy.trace(**x):
        read = nnsight.save([sites.first(engine.at(s.block(i)).output).clone() for i in range(s.layers)])
    hooked = _hooked(loaded.model, [s.block(i) for i in range(s.layers)], x)
    assert s.layers == 6 and all(torch.equal(a, b) for a, b in zip(read, hooked, strict=True))


def test_the_view_shares_storage_and_leaves_the_shared_model_untouched(tiny) -> None:
    model = tiny["gemma3-270m"]
    twin = view_copy(model)
    for (name, p), q in zip(model.named_parameters(), twin.parameters(), strict=True):
        assert p is not q and p.data_ptr() == q.data_ptr() and not q.requires_grad, name
    assert twin.lm_head.weight is twin.model.embed_tokens.weight  # tied weights stay tied
    engine = engine_for(model)
    assert engine is engine_for(model)  # one engine per model
    flags = [p.requires_grad for p in model.parameters()]
    with engine.session(), engine.envoy.trace(**inputs(model)):
        out = sites.first(engine.at(engine.sites.block(0)).output)
        out[:] = 0  # an edit inside a trace of the view
    assert not any("forward" in m.__dict__ for m in model.modules())  # nnsight's controllers are on the view only
    assert [p.requires_grad for p in model.parameters()] == flags


def _race(env, shared: torch.nn.Module, x: dict) -> dict[str, object]:
    """Session A holds a trace open on ``env`` while session B runs a plain forward of ``shared``."""
    started, go, out = threading.Event(), threading.Event(), {}

    def a() -> None:
        try:
            with torch.no_grad(), env.trace(**x):
                _ = env.transformer.h[0].output  # the trace is open and the model is running
                started.set()
                go.wait(30)
                out["a"] = nnsight.save(env.output.logits)
        except Exception as err:  # noqa: BLE001  (the negative control's failure is the point)
            out["a"] = err
        started.set()

    def b() -> None:
        started.wait(30)
        try:
            with torch.no_grad():
                out["b"] = shared(**x).logits
        except Exception as err:  # noqa: BLE001
            out["b"] = err
        go.set()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_a_trace_open_in_one_session_leaves_another_sessions_forward_alone(tiny) -> None:
    model = tiny["gpt2"]
    x = inputs(model)
    with torch.no_grad():
        expected = model(**x).logits
    got = _race(engine_for(model).envoy, model, x)
    assert torch.equal(got["a"], expected) and torch.equal(got["b"], expected)
    # the negative control: nnsight wrapped around the shared model itself drags the other session into the trace
    control = tiny_family("gpt2")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        broken = _race(nnsight.NNsight(control), control, x)
    assert isinstance(broken["b"], Exception)


def test_two_sessions_tracing_one_model_at_once_get_their_own_values(tiny) -> None:
    model = tiny["bert-base"]
    engine = engine_for(model)
    s = engine.sites
    feeds = [inputs(model, seed=seed) for seed in (1, 2)]
    prompts = [_prompt(model, x) for x in feeds]

    def grab(i: int) -> list[torch.Tensor]:
        with engine.session():
            batch = traces.batch_inputs(engine, prompts[i], 1)
            return traces.capture(engine, s, "resid", batch, 0)[0]

    serial = [grab(0), grab(1)]
    results: dict[int, list[torch.Tensor]] = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, grab(i))) for i in (0, 1, 0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for i in (0, 1):
        assert all(torch.equal(a, b) for a, b in zip(results[i], serial[i], strict=True))


def test_traces_of_two_models_overlap_in_two_threads(tiny) -> None:
    """nnsight's tracing state is per thread and per wrapper: two sessions on two models need no common lock.
    Each trace waits inside its body until the other is open too, so the two really overlap."""
    models = [tiny["gpt2"], tiny["gemma3-270m"]]
    engines = [engine_for(m) for m in models]
    feeds = [inputs(m) for m in models]
    with torch.no_grad():
        expected = [m(**x).logits for m, x in zip(models, feeds, strict=True)]
    both_open = threading.Barrier(2, timeout=30)
    got: dict[int, object] = {}

    def run(i: int) -> None:
        engine, s = engines[i], engines[i].sites
        try:
            with engine.session(), engine.envoy.trace(**feeds[i]):
                _ = sites.first(engine.at(s.block(0)).output)
                both_open.wait()  # the other session's trace is open now as well
                got[i] = nnsight.save(engine.envoy.output.logits)
        except Exception as err:  # noqa: BLE001  (reported by the assertion below)
            got[i] = err

    threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(torch.equal(got[i], expected[i]) for i in (0, 1)), got  # type: ignore[arg-type]


def test_an_engine_goes_with_its_model() -> None:
    """The model cache frees a model it evicts: the engine (and the view over the model's storage) must not keep it."""
    import gc
    import weakref

    from explorer.interventions import engine as engine_module

    model = tiny_family("gpt2")
    engine = weakref.ref(engine_for(model))
    gone = weakref.ref(model)
    held = len(engine_module._ENGINES)
    del model
    gc.collect()
    assert gone() is None and engine() is None and len(engine_module._ENGINES) == held - 1
