"""Every token limit counts every token: a prompt made only of special tokens is capped like any other.

Counting only ordinary tokens, ``"<pad>" x 2,000`` gets past the decoding lab's 1,024-token window ("only its
last -977 are used") and costs minutes. For each limit in the project (decoding prompt, next-token, generation,
fill-mask, the decoder's fill-in, span infilling, generative and extractive QA, attention, similarity,
ColBERT) these tests feed text made only of special tokens and check, through a forward hook, that the
model reads no more tokens than its limit (so such a request costs what a normal one of the same
length costs) and that any message is sane: no negative count, short, no traceback.
"""

from __future__ import annotations

import contextlib
import re

import pytest
import torch

from explorer.core.errors import ExplorerError
from explorer.runtime.loading import load_model
from explorer.runtime.resolve import resolve
from explorer.tasks import attention, colbert, infill, qa, similarity
from explorer.tasks.causal.fill import causal_fill
from explorer.tasks.colbert import encoder
from explorer.tasks.fillmask import fill_one
from explorer.tasks.generation import DecodingSettings, next_token, start
from explorer.tasks.generation.prompt import context_limit, encode_prompt
from explorer.tokenization import load_tokenizer
from tests.tiny_gemma import load_tiny_gemma
from tests.tiny_models import save_tiny

EOT = "<|endoftext|>"  # GPT-2's special token; the tiny Gemma uses GPT-2's tokenizer


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma") / "g")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("limits")
    return {kind: save_tiny(kind, root / kind) for kind in ("bert", "bert-base", "distilbert-qa", "t5")}


@contextlib.contextmanager
def fed_lengths(model: torch.nn.Module):
    """Record the sequence length of every forward call's input_ids (the tokens actually read)."""
    seen: list[int] = []

    def hook(_module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is not None:
            seen.append(int(ids.shape[-1]))

    handle = model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield seen
    finally:
        handle.remove()


def sane(text: str) -> None:
    """A message or notice a user can read: no negative number, one short line."""
    assert not re.search(r"(?<![\w-])-\d", text), text
    assert "\n" not in text and len(text) < 400, text


# ---------------------------------------------------------------- decoders

def test_decoding_prompt_of_special_tokens_is_cut_to_the_window() -> None:
    tok = load_tokenizer("gpt2")
    prompt = encode_prompt(tok, EOT * 2000, 1024)
    assert len(prompt.ids) == 1024 and prompt.total_tokens == 2000
    sane(prompt.notices[0].text)
    assert "last 1,024" in prompt.notices[0].text


def test_only_the_tokenizers_own_bos_is_kept_in_front() -> None:
    class _Bos:  # adds one <bos> (id 2) like Gemma; "<" typed by the user is id 2 as well
        all_special_ids = [2]

        def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
            return {"input_ids": ([2] if add_special_tokens else []) + [2 if c == "<" else 10 for c in text]}

        def convert_ids_to_tokens(self, ids):
            return ["<bos>" for _ in ids]

    prompt = encode_prompt(_Bos(), "<" * 50, 8)
    assert len(prompt.ids) == 8  # not 51: typed specials are text like any other
    assert "<bos> stays in front" in prompt.notices[0].text
    sane(prompt.notices[0].text)


@pytest.mark.parametrize("limit", [1, 2])
def test_a_tiny_window_never_gives_a_negative_count(limit: int) -> None:
    prompt = encode_prompt(load_tokenizer("gpt2"), EOT * 10, limit)
    assert len(prompt.ids) == limit
    sane(prompt.notices[0].text)


def test_next_token_reads_as_many_tokens_as_a_normal_prompt(gemma) -> None:
    limit = context_limit(gemma.model)
    with fed_lengths(gemma.model) as special:
        res = next_token(gemma, EOT * 2000, top_k=3)
    with fed_lengths(gemma.model) as normal:
        next_token(gemma, "word " * 2000, top_k=3)
    assert special == normal == [limit] and res.prompt_tokens == limit
    assert any("2,000 special token(s) typed as text" in t for t in res.notice_texts)  # said, not silent
    for text in res.notice_texts:
        sane(text)


@pytest.mark.parametrize("strategy", ["greedy", "beam"])
def test_generation_prompt_of_special_tokens_is_capped(gemma, strategy: str) -> None:
    prompt, decoder = start(gemma, EOT * 2000, DecodingSettings(strategy, max_new_tokens=1, beams=2))
    assert len(prompt.ids) == context_limit(gemma.model)
    with fed_lengths(gemma.model) as seen:
        decoder.run()
    assert max(seen) <= context_limit(gemma.model)


def test_decoder_fill_in_of_special_tokens_is_capped(gemma) -> None:
    limit = context_limit(gemma.model)
    with fed_lengths(gemma.model) as seen:
        fill = causal_fill(gemma, EOT * 1500 + " ___ " + EOT * 1500, top_k=2, answer_tokens=1)
    assert seen and max(seen) <= limit
    for note in fill.notices:
        sane(note.text)


def test_decoder_span_infilling_of_special_tokens_is_capped(gemma) -> None:
    with fed_lengths(gemma.model) as seen:
        res = infill.infill(gemma, EOT * 150 + " ___ " + EOT * 150, max_new_tokens=1)  # 3,900 characters
    assert max(seen) <= context_limit(gemma.model)
    for text in res.to_dict()["notices"]:
        sane(text)


def test_generative_qa_context_of_special_tokens_is_capped(gemma) -> None:
    from explorer.tasks.causal.answer import answer_question

    with fed_lengths(gemma.model) as seen:
        res = answer_question(gemma, "What is it?", EOT * 3000)
    assert max(seen) <= context_limit(gemma.model)
    for text in res.to_dict().get("notices", []):
        sane(text)


# ---------------------------------------------------------------- encoders and seq2seq

def test_fill_mask_of_special_tokens_reads_at_most_the_model_positions(tiny) -> None:
    lm = load_model(resolve(str(tiny["bert"])), "masked-lm")
    with fed_lengths(lm.model.base_model) as seen:  # the MLM head reads only the mask rows
        res = fill_one(lm, "[PAD] " * 1500 + "[MASK] " + "[SEP] " * 1500, top_k=2)
    assert seen == [128] and res.n_tokens == 128
    for note in res.notices:
        sane(note.text)


def test_t5_infilling_of_special_tokens_is_refused_with_a_count(tiny) -> None:
    lm = load_model(resolve(str(tiny["t5"])), "seq2seq")
    with pytest.raises(ExplorerError) as err:
        infill.infill(lm, "</s>" * 900 + " ___", max_new_tokens=1)
    sane(str(err.value))
    assert "at most" in str(err.value)


def test_extractive_qa_windows_of_special_tokens_are_capped(tiny) -> None:
    lm = load_model(resolve(str(tiny["distilbert-qa"])), "question-answering")
    limit = qa.window_length(lm)
    with fed_lengths(lm.model) as seen:
        res = qa.answer(lm, "Where?", "[PAD] " * 1000 + "Paris." + " [SEP]" * 1000)
    assert seen and max(seen) <= limit
    for text in res.to_dict()["notices"]:
        sane(text)


def test_attention_of_special_tokens_only_is_a_message_and_mixed_text_is_capped(tiny) -> None:
    lm = load_model(resolve(str(tiny["bert-base"])), "base", attn_implementation="eager")
    with pytest.raises(ExplorerError) as err:
        attention.extract_attention(lm.model, lm.tokenizer, "[PAD]" * 2000, max_tokens=64)
    sane(str(err.value))
    with fed_lengths(lm.model) as seen:
        maps = attention.extract_attention(lm.model, lm.tokenizer, "word " + "[PAD]" * 2000, max_tokens=64)
    assert seen == [64] and len(maps.tokens) == 64
    for note in maps.notices:
        sane(note.text)


def test_similarity_of_special_tokens_reads_at_most_the_limit(tiny, monkeypatch) -> None:
    from explorer.tasks import packedencoder

    lm = load_model(resolve(str(tiny["bert-base"])))
    packed: list[int] = []  # MiniLM-like encoders run packed (no model.forward): record each sentence's ids
    real_pack = packedencoder.pack
    monkeypatch.setattr(packedencoder, "pack", lambda ids, device: (packed.extend(map(len, ids)),
                                                                    real_pack(ids, device))[1])
    with fed_lengths(lm.model) as seen:
        res = similarity.similarity(lm, ["[PAD] " * 2000, "[CLS] " * 2000, "a cat"])
    assert seen + packed and max(seen + packed) <= similarity.max_length(lm)
    for note in res.notices:
        sane(note.text)


def test_colbert_of_special_tokens_reads_at_most_its_limits(tiny) -> None:
    lm = load_model(resolve(str(tiny["bert-base"])))
    enc = encoder.make_encoder(lm)
    q_limit, d_limit = encoder.limits(enc)
    with fed_lengths(lm.model) as seen:
        ranking = colbert.rank(enc, lm, "[MASK] " * 250, ["[PAD] " * 2000, "[SEP] " * 2000])
    assert max(seen) <= max(q_limit, d_limit, similarity.max_length(lm))
    for note in ranking.notices:
        sane(note.text)
