"""Every cap on the length of a text, in characters, in one place, each named for what it bounds.

A text past its cap is refused with a message (never cut silently), before any tokenizer or model sees
it: tokenizing a pasted book already takes seconds. Pages give their text boxes the same cap
(``max_chars=``), so the box and the library agree. Each comment says why that size.

Caps that depend on the device and its free memory (tokens shown, prompt tokens, new tokens, models a
page) are in :mod:`explorer.runtime.capacity`; bytes read from files and uploads in
:mod:`explorer.core.userfiles`. Torch-free: the CLI's light commands and the pages import it for nothing.

>>> SERVED_EMBEDDING_TOTAL_CHARS == SIMILARITY_LIST_CHARS + SERVED_EMBEDDING_TEXT_CHARS
True
"""

from __future__ import annotations

__all__ = [
    "ATTENTION_TEXT_CHARS", "C4_PASTE_CHARS", "COLBERT_QUERY_CHARS", "COMPRESSION_PROMPT_CHARS",
    "DEBERTA_SENTENCE_CHARS", "DECODER_FILL_TEXT_CHARS", "DECODER_QA_CONTEXT_CHARS", "DECODER_QA_QUESTION_CHARS",
    "DISTILLATION_SENTENCE_CHARS", "EARLY_EXIT_PASSAGE_CHARS", "ECHO_CHARS", "ENDPOINT_MODEL_CHARS",
    "ENDPOINT_NAME_CHARS", "ENDPOINT_URL_CHARS", "EVALUATION_EXAMPLE_CHARS", "EVALUATION_QUERY_CHARS",
    "EVALUATION_TEXT_CHARS", "EXPLAIN_TARGET_CHARS", "EXPLAIN_TEXT_CHARS",
    "FILL_MASK_PROMPT_CHARS", "FORWARD_TEXT_CHARS", "FORWARD_TOKENS", "GENERATION_PROMPT_CHARS",
    "HEAD_IMPORTANCE_TEXT_CHARS", "INTERVENTION_ANSWER_CHARS", "INTERVENTION_PROMPT_CHARS",
    "OBJECTIVES_TEXT_CHARS", "PATH_CHARS", "POSITIONS_LIST_CHARS", "QA_CONTEXT_CHARS",
    "QA_QUESTION_CHARS", "SBERT_SENTENCE_CHARS", "SERVED_EMBEDDING_TEXT_CHARS", "SERVED_EMBEDDING_TOTAL_CHARS",
    "SERVED_PROMPT_CHARS", "SERVED_SCORED_CHARS", "SIFT_PROMPT_CHARS", "SIMILARITY_LIST_CHARS",
    "SPAN_PROMPT_CHARS", "TEXT2TEXT_INPUT_CHARS", "TOKENIZATION_TEXT_CHARS",
]

# ---- messages ------------------------------------------------------------------------------------------
ECHO_CHARS = 80  # user input echoed in a message is cut to this: a message never repeats a pasted page

# ---- texts the library reads whole or cuts to a model's window itself ----------------------------------------
# Far above any model's window: the library cuts to the window (and says so); the cap only refuses a pasted
# book before tokenizing it, which alone would take seconds.
ATTENTION_TEXT_CHARS = 200_000  # attention maps: only the first tokens are shown anyway
GENERATION_PROMPT_CHARS = 200_000  # a local decoder's prompt: cut to its last prompt tokens anyway
DECODER_FILL_TEXT_CHARS = 200_000  # a decoder's blank filling: cut to the window around the blank
DECODER_QA_CONTEXT_CHARS = 200_000  # a decoder's QA context: cut to the model's window anyway
OBJECTIVES_TEXT_CHARS = 200_000  # the objectives page's text: far beyond the 512 tokens it shows
TOKENIZATION_TEXT_CHARS = 200_000  # the tokenizers page: far above any model limit
FILL_MASK_PROMPT_CHARS = 100_000  # fill-mask prompts (one per line): beyond this, tokenizing is the slow part
C4_PASTE_CHARS = 2_000_000  # a text pasted into the C4 cleaning view; the bundled 6 MB corpus is read by the library

# ---- evaluation (task files are read line by line; each example is scored whole) ------------------------------
# 200,000 characters: about 50,000 tokens of English, a short book chapter; rolling windows score every token once,
# about four minutes of Gemma 3 270M on 2 CPU cores (the page keeps what its budget allows and says so)
EVALUATION_TEXT_CHARS = 200_000
EVALUATION_EXAMPLE_CHARS = 20_000  # one example's context and its longest choice: ~5,000 tokens, run per choice
EVALUATION_QUERY_CHARS = 2_000  # the projector's typed sentence whose nearest neighbours are shown

# ---- texts read whole by the model -------------------------------------------------------------------------------
QA_CONTEXT_CHARS = 20_000  # extractive QA: about 5,000 tokens, i.e. ~20 windows of 384 tokens
QA_QUESTION_CHARS = 1_000  # a question is a sentence or two; it is repeated in every window
SIMILARITY_LIST_CHARS = 20_000  # a whole pasted sentence list (a search query may be as long), embedded in batches
SPAN_PROMPT_CHARS = 4_000  # span infilling: every blank is one more generation over the whole prompt
SBERT_SENTENCE_CHARS = 2_000  # one typed sentence of the Sentence-BERT triplet view
COLBERT_QUERY_CHARS = 2_000  # a ColBERT query: a sentence, padded to its query length
TEXT2TEXT_INPUT_CHARS = 2_000  # the text-to-text mechanism's input: a sentence shows it
DECODER_QA_QUESTION_CHARS = 2_000  # a decoder's QA question: a sentence or two
DISTILLATION_SENTENCE_CHARS = 2_000  # the distillation mechanism: one short sentence, masked and compared
SIFT_PROMPT_CHARS = 2_000  # SiFT's perturbation: a sentence shows it
DEBERTA_SENTENCE_CHARS = 2_000  # DeBERTa's disentangled attention: a short sentence, every head's maps kept
# "Why this prediction": every token is one occlusion pass and one row of gradients at each integrated-gradients
# step, so a paragraph (~250 tokens), not a document; a target or foil is a word or a short phrase.
EXPLAIN_TEXT_CHARS = 1_000
EXPLAIN_TARGET_CHARS = 100

# "Forward pass": every operation of every layer is kept (Gemma 3: ~20 tensors a layer), so a sentence or two.
FORWARD_TOKENS = 64  # tokens the step-through reads, special tokens included
FORWARD_TEXT_CHARS = 1_000  # refuses a pasted page before tokenizing; 64 tokens of English are ~300 characters

# ---- the compression lab (each method's copy answers the text again) -------------------------------------------
COMPRESSION_PROMPT_CHARS = 500  # the side-by-side answers need a sentence, not a document
EARLY_EXIT_PASSAGE_CHARS = 2_000  # the classifier reads its first tokens; the page's box takes as much
HEAD_IMPORTANCE_TEXT_CHARS = 1_500  # about 300 tokens of prose: one forward and one backward per head score

# ---- interventions (every position of a prompt is patched in its own copy of the forward) ----------------------
INTERVENTION_PROMPT_CHARS = 1_000  # a clean/corrupted pair or a steering prompt: a sentence or two, not a page
INTERVENTION_ANSWER_CHARS = 100  # a target or foil answer: a word (only its first token is scored)

# ---- served models (the text is sent whole to an engine) -----------------------------------------------------
SERVED_PROMPT_CHARS = 20_000  # a served prompt is sent whole; the engine cuts to its context and says so
SERVED_SCORED_CHARS = 4_000  # one scored text (context + continuation): ~1,000 tokens, minutes on a CPU engine
SERVED_EMBEDDING_TEXT_CHARS = 8_000  # one text: ~2,000 tokens of English, past most engines' embedding window
SERVED_EMBEDDING_TOTAL_CHARS = SIMILARITY_LIST_CHARS + SERVED_EMBEDDING_TEXT_CHARS  # a whole list and its query
ENDPOINT_NAME_CHARS = 64  # an endpoint's name becomes the model key served:NAME, shown in menus
ENDPOINT_URL_CHARS = 500  # an OpenAI base URL; a longer one is not an address someone typed
ENDPOINT_MODEL_CHARS = 200  # the model name as the server lists it (Hugging Face ids are under 100)

# ---- small structured inputs -------------------------------------------------------------------------------
PATH_CHARS = 4_096  # what Linux accepts for a whole path (PATH_MAX): a longer one cannot be looked up
POSITIONS_LIST_CHARS = 1_000  # Longformer's global positions: 64 positions of up to 5 digits and separators
