"""A downstream task a tiny model can learn: "is this passage from the library reference or from the narrative docs?"

FastBERT's early exit (:mod:`explorer.training.exits`) needs a classification task that the
lab's models learn well enough for their layers to disagree about how sure they are; the swapped-
words probe stays near chance at CPU budgets, so it cannot show an exit. This task is topic
classification, the kind of task FastBERT's paper measured (THUCNews, AG News, DBpedia…), made
from the bundled corpus's own document names:

- label 1, **library reference**: a window of a ``library/...`` document (a module's reference page);
- label 0, **narrative**: a window of any other document (tutorial, how-tos, what's new, language
  reference, FAQ, extending, using…).

Train examples come from the corpus's TRAIN documents and test examples from its HELD-OUT documents
(never trained on by the lab, and never seen by this task's fine-tuning): a model cannot pass by
remembering a document. Each set is exactly balanced and drawn with a seed. The held-out documents
give 379 library and 404 narrative windows of 64 tokens; a 2-layer model fine-tuned for 100 steps
from random weights already scores about 80% (measured), so the task shows what each layer adds.

>>> label("library/functools"), label("tutorial/classes"), label("")
(1, 0, None)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.training import batches
from explorer.training.batches import Window
from explorer.training.corpus import Corpus
from explorer.training.downstream import Example

__all__ = ["LABELS", "TASK", "examples", "label", "labelled_windows"]

TASK = "library reference or narrative docs"
LABELS = ("narrative", "library reference")  # index = label


def label(name: str) -> int | None:
    """1 for a ``library/`` document, 0 for any other named document, None when the document has no name."""
    if not name:
        return None
    return int(name.startswith("library/"))


@lru_cache(maxsize=4)
def labelled_windows(text: Corpus, split: str, seq_len: int) -> tuple[tuple[Window, int], ...]:
    """(window, label) for every window of ``split``'s named documents, in corpus order."""
    names = text.train_names if split == "train" else text.heldout_names
    out: list[tuple[Window, int]] = []
    if not names:  # a corpus without names: nothing is labelled (and nothing to tokenize)
        return ()
    for doc, name in zip(batches.per_document(text, split, seq_len), names, strict=False):
        y = label(name)
        if y is not None:
            out.extend((w, y) for w in doc)
    return tuple(out)


def examples(text: Corpus, split: str, n: int, seed: int, seq_len: int) -> list[Example]:
    """``n`` balanced examples (``n // 2`` of each label) of ``split``; windows repeat only when a class runs out."""
    found = labelled_windows(text, split, seq_len)
    by_label = [[w for w, y in found if y == k] for k in (0, 1)]
    if min(len(b) for b in by_label) < 2:
        raise ExplorerError(f"\"{TASK}\" needs documents named like the bundled corpus's (### library/... and others); "
                            f"{text.name} has {len(by_label[1])} library and {len(by_label[0])} other windows in its "
                            f"{split} part. The early-exit task uses the bundled corpus: leave the text empty.")
    rng = np.random.default_rng([seed, 2 if split == "train" else 3])  # not the swap probe's draws
    half = max(1, n // 2)
    picked: list[Example] = []
    for k, pool in enumerate(by_label):
        order = np.concatenate([rng.permutation(len(pool)) for _ in range(-(-half // len(pool)))])[:half]
        picked.extend(Example(pool[int(i)], k, pool[int(i)], split) for i in order)
    return [picked[int(i)] for i in rng.permutation(len(picked))]
