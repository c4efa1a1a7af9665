"""Published results as data: the benchmark tables of the papers, one row per (model, metric).

The tables live in ``assets/results/*.tsv``, transcribed from the papers; each file opens with
its source line and ``# benchmark:`` (optionally ``# pairs:`` naming the two metrics of cells
such as ``86.3/80.8``, ``# describe:`` listing columns that describe the setting rather than
score it, and ``# text:`` listing columns whose cells are words, not numbers: a claim a source makes
only in words, such as an abstract's "gains of more than 10 BLEU", travels with the row's metrics as
text and is never turned into a number). Every row carries its ``variant`` (catalog key of the same
architecture, ``-`` when the catalog has none) and its ``source`` (paper and table). ``-`` in a cell
means the paper did not report it: kept as a row whose value is ``None`` ("not reported").

For the efficiency chart each scored variant is placed at its parameter count and its forward
FLOPs per token from our own cost model (:mod:`explorer.architecture.analysis`, bare network, no task head).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache

from explorer import ASSETS
from explorer.core.errors import ExplorerError, shorten

__all__ = ["NOT_REPORTED", "SOURCE_KINDS", "Row", "Point", "benchmarks", "costs", "frontier", "higher_is_better",
           "load_rows", "metrics", "numberless", "points", "rows", "scored_variants", "source_kind", "sources_by_kind",
           "table", "unplaced", "variant_cost", "with_compute"]

RESULTS_DIR = ASSETS / "results"
NOT_REPORTED = "not reported"
COST_SEQ_LEN = 128  # sequence length at which FLOPs per token are counted for the chart
# costs; the rest score
LOWER_IS_BETTER = {"inference_seconds", "params_millions", "flops", "train_flops", "infer_flops"}
# Metric-name endings that are lower-is-better: perplexity, bits per byte / character (GPT-2's Table 3), latency.
LOWER_IS_BETTER_SUFFIXES = ("_ppl", "_bpb", "_bpc", "_ms", "_seconds")
# Columns that describe a model's size or cost rather than score it (ALBERT's Table 2, FastBERT's FLOPs, ELECTRA's
# train / infer FLOPs): listed after the scores, so a benchmark's default metric is never "the bigger model wins".
SIZE_METRICS = ("params_millions", "flops", "train_flops", "infer_flops")
# What a row's source is, by the words its ``source`` cell uses: most name a paper's table; where that could not be
# read, the authors' README (their own listing of the released models), the abstract, or the model card.
SOURCE_KINDS = {"README": "the authors' README", "abstract": "an abstract", "model card": "a model card"}
PAPER_TABLE = "the paper and its table"


@dataclass(frozen=True)
class Row:
    """One published number (``value`` None = not reported), with where it comes from."""

    model: str
    variant: str | None
    benchmark: str
    metric: str
    value: float | None
    source: str
    texts: tuple[tuple[str, str], ...] = ()  # (column, words) of the line's ``# text:`` cells, e.g. a claim

    def to_dict(self) -> dict[str, object]:
        """The six fields `python -m explorer results --json` documents, and ``texts`` ({column: words}) on a row
        that carries words, such as a claim the paper states without a table."""
        out = {k: v for k, v in asdict(self).items() if k != "texts"}
        return {**out, "texts": dict(self.texts)} if self.texts else out


def parse_value(cell: str) -> float | None:
    """A table cell as a number; ``-`` (not reported) is None. Anything else is a data error."""
    cell = cell.strip()
    if cell == "-":
        return None
    try:
        return float(cell)
    except ValueError as err:
        raise ExplorerError(f"Results table cell {shorten(cell)!r} is not a number: fix assets/results.") from err


def _directives(lines: list[str]) -> dict[str, str]:
    """``# name: value`` lines after the source line."""
    out = {}
    for line in lines:
        name, _, value = line.lstrip("# ").partition(":")
        out[name.strip()] = value.strip()
    return out


def _pairs(spec: str) -> dict[str, tuple[str, str]]:
    """``mrpc=f1/accuracy; ...`` -> {"mrpc": ("f1", "accuracy")}."""
    out = {}
    for item in filter(None, (s.strip() for s in spec.split(";"))):
        column, _, names = item.partition("=")
        first, _, second = names.partition("/")
        out[column.strip()] = (first.strip(), second.strip())
    return out


def _cells(column: str, cell: str, pairs: dict[str, tuple[str, str]]) -> list[tuple[str, float | None]]:
    """One cell -> (metric, value) pairs: ``86.3/80.8`` becomes two named metrics."""
    if column not in pairs:
        return [(column, parse_value(cell))]
    names = pairs[column]
    parts = cell.split("/") if cell.strip() != "-" else ["-", "-"]
    if len(parts) != 2:
        raise ExplorerError(f"Results cell {shorten(cell)!r} of {shorten(column)!r} should hold two values a/b: fix "
                            "assets/results.")
    return [(f"{column}_{name}", parse_value(part)) for name, part in zip(names, parts, strict=True)]


def parse_table(text: str) -> list[Row]:
    """Rows of one results file (see the module docstring for the format)."""
    lines = [line for line in text.splitlines() if line.strip()]
    comments = [line for line in lines[1:] if line.startswith("#")]
    meta = _directives(comments)
    header, *body = [line.split("\t") for line in lines if not line.startswith("#")]
    pairs, describe, words = (_pairs(meta.get("pairs", "")), _names(meta.get("describe", "")),
                              _names(meta.get("text", "")))
    out = []
    for cells in body:
        record = dict(zip(header, cells, strict=True))
        model = _model_label(cells[0], [record[c] for c in describe])
        variant = None if record["variant"] == "-" else record["variant"]
        texts = tuple((c, record[c].strip()) for c in words if record[c].strip() != "-")
        for column in header[1:]:
            if column in ("variant", "source") or column in describe or column in words:
                continue
            for metric, value in _cells(column, record[column], pairs):
                out.append(Row(model, variant, meta["benchmark"], metric, value, record["source"], texts))
    return out


def _names(spec: str) -> list[str]:
    """``a,b`` -> ["a", "b"] (the column lists of ``# describe:`` and ``# text:``)."""
    return [c.strip() for c in spec.split(",") if c.strip()]


def _model_label(model: str, setting: Sequence[str]) -> str:
    return f"{model} ({', '.join(setting)})" if setting else model


@lru_cache(maxsize=1)
def load_rows() -> tuple[Row, ...]:
    """Every row of every table in assets/results, file by file in name order."""
    files = sorted(RESULTS_DIR.glob("*.tsv"))
    if not files:
        raise ExplorerError(f"No results tables in {RESULTS_DIR}: restore assets/results from git.")
    return tuple(row for path in files for row in parse_table(path.read_text(encoding="utf-8")))


def benchmarks() -> list[str]:
    """Benchmark names, in first-seen order."""
    return list(dict.fromkeys(r.benchmark for r in load_rows()))


def _listed(names: list[str], room: int = 300) -> str:
    """``names`` joined, cut to about ``room`` characters with how many more there are (a message stays short).

    >>> _listed(["a", "b", "c"], room=4)
    'a, b … and 1 more (`python -m explorer results` prints every table)'
    """
    shown: list[str] = []
    for name in names:
        if shown and len(", ".join([*shown, name])) > room:
            return (f"{', '.join(shown)} … and {len(names) - len(shown)} more "
                    "(`python -m explorer results` prints every table)")
        shown.append(name)
    return ", ".join(shown)


def rows(benchmark: str | None = None) -> list[Row]:
    """All rows, or those of one benchmark (an unknown name gets suggestions)."""
    if benchmark is None:
        return list(load_rows())
    names = benchmarks()
    benchmark = {n.lower(): n for n in names}.get(benchmark.strip().lower(), benchmark)  # "GLUE-dev" is glue-dev
    if benchmark not in names:
        close = difflib.get_close_matches(benchmark.lower(), names, n=2, cutoff=0.4)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ExplorerError(f"Unknown benchmark {shorten(benchmark)!r}.{hint} Choose one of: {_listed(names)}.")
    return [r for r in load_rows() if r.benchmark == benchmark]


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is better (scores) or worse (times)."""
    return metric not in LOWER_IS_BETTER and not metric.endswith(LOWER_IS_BETTER_SUFFIXES)


def scored_variants(selected: Iterable[Row]) -> tuple[str, ...]:
    """Catalog keys of the rows that name one, sorted (the hashable argument of a cached cost lookup)."""
    return tuple(sorted({r.variant for r in selected if r.variant}))


def metrics(benchmark: str) -> list[str]:
    """The metrics of a benchmark, scores in table order, then sizes (so the first is a score)."""
    names = list(dict.fromkeys(r.metric for r in rows(benchmark)))
    return sorted(names, key=lambda m: m in SIZE_METRICS)


def source_kind(source: str) -> str:
    """What a ``source`` cell cites: one of :data:`SOURCE_KINDS`' values, else the paper and its table.

    >>> source_kind("Devlin et al. 2019 (BERT), Table 1"), source_kind("Fan et al. 2021 (M2M-100), abstract")
    ('the paper and its table', 'an abstract')
    """
    return next((kind for word, kind in SOURCE_KINDS.items() if word in source), PAPER_TABLE)


def sources_by_kind() -> dict[str, list[str]]:
    """For each kind of source other than a paper's table, the works whose rows cite one (the name in the source's
    parentheses, "ALBERT"), in first-seen order: what a page says instead of claiming every row cites a table."""
    out: dict[str, list[str]] = {kind: [] for kind in SOURCE_KINDS.values()}
    for row in load_rows():
        kind = source_kind(row.source)
        work = row.source.split("(", 1)[-1].split(")", 1)[0]
        if kind in out and work not in out[kind]:
            out[kind].append(work)
    return {kind: works for kind, works in out.items() if works}


def table(selected: Sequence[Row]) -> list[dict[str, object]]:
    """One record per (model, source) with a column per metric; missing values read "not reported".

    Text cells (a claim in words) follow the metrics, one column each; "" where a line has none.
    """
    names = list(dict.fromkeys(r.metric for r in selected))
    words = list(dict.fromkeys(column for r in selected for column, _ in r.texts))
    records: dict[tuple[str, str], dict[str, object]] = {}
    for r in selected:
        record = records.setdefault((r.model, r.source), {"model": r.model, "catalog": r.variant or "",
                                                          **dict.fromkeys(names, NOT_REPORTED),
                                                          **dict.fromkeys(words, ""), **dict(r.texts)})
        record[r.metric] = NOT_REPORTED if r.value is None else r.value
    return [{**rec, "source": source} for (_, source), rec in records.items()]


def numberless(selected: Sequence[Row]) -> bool:
    """Whether the rows are claims in words only (text cells, no number in any row): there is nothing to chart."""
    return any(r.texts for r in selected) and all(r.value is None for r in selected)


def unplaced(selected: Iterable[Row]) -> dict[str, list[str]]:
    """Models the efficiency chart cannot place: no catalog variant, or no value reported."""
    out: dict[str, list[str]] = {"no catalog variant": [], NOT_REPORTED: []}
    for r in selected:
        bucket = "no catalog variant" if r.variant is None else NOT_REPORTED if r.value is None else None
        if bucket and r.model not in out[bucket]:
            out[bucket].append(r.model)
    return out


@dataclass(frozen=True)
class Point:
    """A scored variant on the efficiency chart."""

    model: str
    variant: str
    score: float
    params: int
    flops_per_token: int
    source: str
    train_flops: float | None = None  # pretraining compute (explorer.architecture.budgets: reported or 6ND), if known


def variant_cost(key: str, seq_len: int = COST_SEQ_LEN) -> tuple[int, int]:
    """(parameters, forward FLOPs per token) of a variant's bare network, from our cost model."""
    from explorer.architecture import analysis  # imports torch: only when a chart is asked for

    result = analysis.analyse_variant(key, seq_len=seq_len, head="base", shapes=False)
    return result.base_params, result.flops.total


def costs(keys: Iterable[str], seq_len: int = COST_SEQ_LEN) -> dict[str, tuple[int, int]]:
    """:func:`variant_cost` of each key."""
    return {key: variant_cost(key, seq_len) for key in dict.fromkeys(keys)}


def points(selected: Iterable[Row], costs: dict[str, tuple[int, int]]) -> list[Point]:
    """Rows that have a variant and a value, placed at that variant's cost."""
    return [Point(r.model, r.variant, r.value, *costs[r.variant], r.source)
            for r in selected if r.variant is not None and r.value is not None]


def with_compute(pts: Iterable[Point], train_flops: dict[str, float | None]) -> list[Point]:
    """The points whose variant has a pretraining compute (``train_flops`` by catalog key), carrying it."""
    return [replace(p, train_flops=train_flops[p.variant]) for p in pts if train_flops.get(p.variant) is not None]


def frontier(pts: Sequence[Point], x: str = "params", higher_is_better: bool = True) -> list[Point]:
    """The efficiency frontier: points no other point beats with a lower or equal cost."""
    sign = 1 if higher_is_better else -1
    best: list[Point] = []
    for p in sorted(pts, key=lambda p: (getattr(p, x), -sign * p.score)):
        if not best or sign * p.score > sign * best[-1].score:
            best.append(p)
    return best
