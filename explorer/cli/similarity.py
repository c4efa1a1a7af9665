"""CLI of the similarity area: the Similarity page's bi-encoder matrix and ColBERT ranking.

    python -m explorer similarity --model KEY_OR_PATH [--json] SENT SENT ...
    python -m explorer similarity --endpoint NAME | --base-url URL [--model M] [--json] SENT SENT ...
    python -m explorer colbert --query "A man is eating pasta." [--json] SENT SENT ...
"""

from __future__ import annotations

import argparse

from explorer.cli import add_placement, placement_of, print_json
from explorer.cli.argtypes import number
from explorer.cli.progress import Ticker
from explorer.cli.served import add_endpoint_flags, backend_from_args
from explorer.core.errors import ExplorerError
from explorer.core.notices import texts
from explorer.runtime.resolve import resolve

__all__ = ["cmd_colbert", "cmd_similarity", "register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add this area's sub-commands to the parser."""
    p = sub.add_parser("similarity", help="cosine similarity matrix of sentences with a bi-encoder")
    p.add_argument("sentences", nargs="+", metavar="SENT", help="sentences to compare (quote each one)")
    p.add_argument("--model", default="sentence-bert",
                   help="catalog key, hub id or save_pretrained directory (default: the bundled "
                        "all-MiniLM-L6-v2, key sentence-bert)")
    p.add_argument("--models-dir", default=None, help="where to look for weights (default: EXPLORER_MODELS_DIR)")
    p.add_argument("--batch-size", type=number(int, 1, 1024), default=32,
                   help="sentences per forward pass (per request for a served model)")
    p.add_argument("--json", action="store_true", help='print {"model", "sentences", "matrix"} as JSON')
    add_placement(p)
    add_endpoint_flags(p)  # --endpoint NAME / --base-url URL: the server's /v1/embeddings instead of a local model
    p.set_defaults(func=cmd_similarity)
    c = sub.add_parser("colbert", help="rank sentences for a query by ColBERT MaxSim, beside the bi-encoder's ranking")
    c.add_argument("sentences", nargs="+", metavar="SENT", help="the documents to rank (quote each one)")
    c.add_argument("--query", required=True, help="the query")
    c.add_argument("--model", default="sentence-bert",
                   help="the bi-encoder ranked beside it (default: the bundled all-MiniLM-L6-v2); the token "
                        "vectors come from a ColBERT checkpoint when one is downloaded, else a labelled stand-in")
    c.add_argument("--models-dir", default=None, help="where to look for weights (default: EXPLORER_MODELS_DIR)")
    c.add_argument("--json", action="store_true", help="print the ranking as JSON")
    add_placement(c)
    c.set_defaults(func=cmd_colbert)


def cmd_similarity(args: argparse.Namespace) -> int:
    """Embed the sentences (mean pooling, normalised; or a served model's ``/v1/embeddings``) and print their
    cosine matrix."""
    from explorer.runtime.placement import caption
    from explorer.tasks import similarity

    if args.batch_size < 1:
        raise ExplorerError(f"--batch-size must be at least 1, got {args.batch_size}.")
    model = backend_from_args(args, lambda: resolve(args.model, args.models_dir))
    here = model.ref is not None
    clean = similarity.clean_sentences(list(args.sentences))  # bad input fails before a model loads
    with Ticker() as ticker:  # a served model embeds a sentence per request on some engines: never silent
        ticker.status = lambda s: (f"similarity: embedding {len(clean.sentences)} sentences with {model.shown}, "
                                   f"{s:.0f} s")
        res = model.similarity(list(clean.sentences), args.batch_size)
    notes = clean.notices if here else res.notices  # a served result adds how the server was asked
    if args.json:
        print_json({"model": args.model if here else res.model, "sentences": list(res.sentences),
                    "matrix": [list(r) for r in res.matrix], "dim": res.dim, "untrained": res.untrained,
                    "notices": texts(notes), "device": res.device, "device_name": res.device_name,
                    "dtype": res.dtype})
        return 0
    for note in notes:
        print(f"note: {note}")
    width = len(res.sentences)
    print(f"{res.model}: cosine similarity of {width} sentences ({res.dim}-d embeddings) "
          f"[{caption(res.device_name, res.dtype)}]")
    for i, (sent, row) in enumerate(zip(res.sentences, res.matrix, strict=True)):
        cells = " ".join(f"{v:6.3f}" for v in row)
        print(f"[{i + 1:>2}] {cells}  {sent[:60]}")
    return 0


def cmd_colbert(args: argparse.Namespace) -> int:
    """MaxSim ranking of the sentences (ColBERT, or the labelled stand-in) beside the bi-encoder's cosine."""
    from explorer.runtime.loading import load_model
    from explorer.tasks import colbert, similarity

    clean = similarity.clean_sentences(list(args.sentences))  # bad input fails before a model loads
    where = placement_of(args).kwargs()
    encoder = colbert.load_encoder(colbert.encoder_ref(args.models_dir), **where)
    ranking = colbert.rank(encoder, load_model(resolve(args.model, args.models_dir), **where), args.query,
                           list(clean.sentences))
    if args.json:
        print_json(ranking.to_dict())
        return 0
    print(f"{ranking.encoder}: Kendall tau vs the bi-encoder {ranking.kendall_tau:.2f}")
    for note in ranking.notices:
        print(f"note: {note}")
    print(" rank  MaxSim   bi-rank  cosine  sentence")
    for d in ranking.docs:
        print(f"{d.colbert_rank:>5} {d.colbert_score:7.3f} {d.bi_rank:>9} {d.bi_score:7.3f}  {d.text[:60]}")
    return 0
