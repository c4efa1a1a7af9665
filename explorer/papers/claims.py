"""The papers' claims, next to what the pretraining lab measures, one row per claim.

Each :class:`Claim` row puts a paper's own figures (read from the Published results tables,
:mod:`explorer.papers.results`, cited by the same ``source`` text) beside our measured ones, with a
verdict (``reproduced``, ``not reproduced``, ``not measurable at this size``, or ``not measured``
when this build has no loss family for it) and why, in plain words. :func:`table` is a pure function
of a :class:`~explorer.training.measurement.Measurement`; ``benchmarks/pretrain_claims.py`` runs
:func:`measure` and :func:`write` s ``benchmarks/results/pretraining_claims.json`` and ``.md``,
which the Published results page reads back with :func:`load`.

Verdicts are qualitative (the models are far smaller than the papers'): a probe difference counts only
beyond two standard errors of the test set's sampling noise; a held-out loss difference only beyond
``LOSS_MARGIN``.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from explorer import ROOT
from explorer.core.errors import ExplorerError
from explorer.papers import results
from explorer.training.figures import Measurement, VariantRun

__all__ = ["LOSS_MARGIN", "RESULTS_JSON", "VERDICTS", "Claim", "Report", "load", "markdown", "measure", "report",
           "stamp", "table", "write"]

RESULTS_JSON = ROOT / "benchmarks" / "results" / "pretraining_claims.json"
VERDICTS = ("reproduced", "not reproduced", "not measurable at this size", "not measured")
LOSS_MARGIN = 0.02  # a held-out loss 2% apart is a difference; closer is within run-to-run noise of a tiny model
ALBERT_COST = 0.05  # "a small cost in quality": ALBERT's held-out MLM loss within 5% of BERT's
DISTIL_SHARE = 0.90  # "keeps most of its teacher": at least 90% of the teacher's probe score


@dataclass(frozen=True)
class Claim:
    """One row of the table."""

    key: str
    claim: str
    paper: str  # the paper's own figures, as the Published results tables hold them
    source: str  # paper and table, cited as on the Published results page
    measured: str
    verdict: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Report:
    """A measurement and the rows computed from it (what the JSON holds)."""

    measurement: Measurement
    rows: tuple[Claim, ...]

    def to_dict(self) -> dict[str, object]:
        return {"measurement": self.measurement.to_dict(), "rows": [r.to_dict() for r in self.rows]}


def _row(benchmark: str, model: str, metric: str, source: str) -> results.Row:
    """One published number; a missing one is a data error in assets/results."""
    for r in results.rows(benchmark):
        if r.model.startswith(model) and r.metric == metric and source in r.source and r.value is not None:
            return r
    raise ExplorerError(f"Published results lack {model} {metric} ({source}): restore assets/results from git.")


def _paper(specs: list[tuple[str, str, str, str]], text: str) -> tuple[str, str]:
    """``text`` formatted with the published values of ``specs`` [(benchmark, model, metric, source)], and the
    sources."""
    found = [_row(*s) for s in specs]
    return text.format(*(r.value for r in found)), "; ".join(dict.fromkeys(r.source for r in found))


def _missing(m: Measurement, *objectives: str) -> str | None:
    gaps = [f"the {m.missing[o]} family" for o in objectives if o in m.missing]
    absent = [o for o in objectives if o not in m.missing and o not in m.variants]
    if gaps:
        return (f"Needs {' and '.join(dict.fromkeys(gaps))}, which this build cannot train yet; rerun the benchmark "
                "after it lands.")
    return f"Not in this measurement: {', '.join(absent)}." if absent else None


def _beyond_noise(a: VariantRun, b: VariantRun) -> float:
    """Two standard errors of the difference of two probe accuracies."""
    return 2 * math.hypot(a.probe_stderr or 0.0, b.probe_stderr or 0.0)


def electra(m: Measurement) -> Claim:
    paper, source = _paper([("glue-dev", "ELECTRA-Small", "glue_score", "(ELECTRA), Table 1"),
                            ("glue-dev", "BERT-Small", "glue_score", "(ELECTRA), Table 1"),
                            ("glue-dev", "ELECTRA-Small", "train_flops", "(ELECTRA), Table 1")],
                           "GLUE dev {0} (ELECTRA-Small) vs {1} (BERT-Small), both at {2:.1e} training FLOPs")
    claim = "ELECTRA's discriminator learns more per unit of compute than BERT's MLM (equal training FLOPs, fine-tuned)"
    gap = _missing(m, "mlm", "electra")
    if gap:
        return Claim("electra", claim, paper, source, "-", "not measured", gap)
    e, b = m.variants["electra"], m.variants["mlm"]
    if e.probe is None or b.probe is None:
        return Claim("electra", claim, paper, source, "-", "not measured", "The probe was not run on both models.")
    noise = _beyond_noise(e, b)
    measured = (f"probe {e.probe:.3f} (ELECTRA, {e.steps} steps, {e.flops:.2e} FLOPs) vs {b.probe:.3f} (BERT MLM, "
                f"{b.steps} steps, {b.flops:.2e} FLOPs); floors {m.floors.get('electra', float('nan')):.3f} / "
                f"{m.floors.get('mlm', float('nan')):.3f}; noise +-{noise:.3f}")
    above = [score - m.floors.get(k, 0.5) > noise / math.sqrt(2)
             for k, score in (("electra", e.probe), ("mlm", b.probe))]
    if not any(above):
        return Claim("electra", claim, paper, source, measured, "not measurable at this size",
                     "Neither pre-trained model beats a randomly initialised one on the probe by more than its noise: "
                     "at this budget pre-training has not taught either anything the probe can see.")
    if e.probe - b.probe > noise:
        return Claim("electra", claim, paper, source, measured, "reproduced",
                     "At the same training FLOPs the discriminator fine-tunes to a better probe score than the MLM.")
    if b.probe - e.probe > noise:
        return Claim("electra", claim, paper, source, measured, "not reproduced",
                     "At the same FLOPs the MLM fine-tunes better. ELECTRA spends part of its compute on the generator "
                     "and needs the generator to get good before its replacements are hard; a tiny run may stop first.")
    return Claim("electra", claim, paper, source, measured, "not measurable at this size",
                 "The two scores are within the probe's sampling noise (two standard errors): a tiny model on a short "
                 "budget cannot separate them.")


def albert(m: Measurement) -> Claim:
    paper, source = _paper([("squad-mnli-sst2-race-dev", "ALBERT-base", "params_millions", "(ALBERT), Table 2"),
                            ("squad-mnli-sst2-race-dev", "BERT-base", "params_millions", "(ALBERT), Table 2"),
                            ("squad-mnli-sst2-race-dev", "ALBERT-base", "avg", "(ALBERT), Table 2"),
                            ("squad-mnli-sst2-race-dev", "BERT-base", "avg", "(ALBERT), Table 2")],
                           "{0:.0f}M vs {1:.0f}M parameters; dev average {2} vs {3}")
    claim = ("ALBERT (factorized embeddings, shared layers) has far fewer parameters than BERT of the same width, "
             "at a small cost")
    gap = _missing(m, "albert", "bert")
    if gap:
        return Claim("albert", claim, paper, source, "-", "not measured", gap)
    a, b = m.variants["albert"], m.variants["bert"]
    if a.heldout_mlm_loss is None or b.heldout_mlm_loss is None:
        return Claim("albert", claim, paper, source, "-", "not measured", "No held-out MLM loss was measured.")
    cost = a.heldout_mlm_loss / b.heldout_mlm_loss - 1
    measured = (f"{a.params / 1e6:.2f}M vs {b.params / 1e6:.2f}M parameters ({a.params / b.params:.2f}x); held-out MLM "
                f"loss {a.heldout_mlm_loss:.3f} vs {b.heldout_mlm_loss:.3f} ({cost:+.1%}) after {a.steps} steps each "
                "(ALBERT + SOP vs BERT + NSP)")
    share = ("; the paper's 9x comes from sharing 12 layers and factorizing a 30,000-piece embedding, while here "
             "2 layers and an 8,192-piece vocabulary leave less to save")
    if not (_learned(a) and _learned(b)):
        return Claim("albert", claim, paper, source, measured, "not measurable at this size", _NOT_LEARNED)
    if a.params >= b.params:
        return Claim("albert", claim, paper, source, measured, "not reproduced", "ALBERT is not smaller here" + share)
    if cost <= ALBERT_COST:
        return Claim("albert", claim, paper, source, measured, "reproduced",
                     f"Fewer parameters, and the held-out MLM loss is at most {ALBERT_COST:.0%} worse" + share + ".")
    return Claim("albert", claim, paper, source, measured, "not reproduced",
                 f"Fewer parameters, but the held-out MLM loss is more than {ALBERT_COST:.0%} worse: one shared layer "
                 "learns more slowly at the start of training" + share + ".")


def distilbert(m: Measurement) -> Claim:
    paper, source = _paper([("glue-dev", "DistilBERT", "score", "(DistilBERT), Table 1"),
                            ("glue-dev", "BERT-base", "score", "(DistilBERT), Table 1"),
                            ("cpu-inference", "BERT-base", "inference_seconds", "(DistilBERT), Table 3"),
                            ("cpu-inference", "DistilBERT", "inference_seconds", "(DistilBERT), Table 3")],
                           "GLUE dev {0} vs {1}: {2:.0f} s vs {3:.0f} s on CPU")
    paper += " (share and speed-up: {:.1%}, {:.2f}x)".format(*_distil_paper_ratios())
    claim = "The DistilBERT student keeps most of its teacher's score and runs faster"
    gap = _missing(m, "distilbert")
    if gap:
        return Claim("distilbert", claim, paper, source, "-", "not measured", gap)
    s = m.variants["distilbert"]
    if s.probe is None or m.teacher_probe is None or m.speed is None:
        return Claim("distilbert", claim, paper, source, "-", "not measured",
                     "No teacher to compare with was measured.")
    share, ratio = s.probe / m.teacher_probe, m.speed["ratio"]
    measured = (f"probe {s.probe:.3f} vs teacher {m.teacher_probe:.3f} ({share:.1%}); forward "
                f"{m.speed['student_ms']:.2f} ms vs {m.speed['teacher_ms']:.2f} ms ({ratio:.2f}x, same run); student "
                f"floor {m.floors.get('distilbert', float('nan')):.3f}")
    if m.teacher_probe - m.floors.get("distilbert", 0.5) <= 2 * (s.probe_stderr or 0.0):
        return Claim("distilbert", claim, paper, source, measured, "not measurable at this size",
                     "The teacher itself scores no better than a random model on the probe, so keeping its score says "
                     "nothing: the tiny teacher has to learn something first.")
    if share >= DISTIL_SHARE and ratio > 1:
        return Claim("distilbert", claim, paper, source, measured, "reproduced",
                     f"The student keeps at least {DISTIL_SHARE:.0%} of its teacher's probe score and is faster.")
    why = (f"The student keeps less than {DISTIL_SHARE:.0%} of its teacher's probe score (the paper: 97%)." if ratio > 1
           else "The student is not faster here: at this width fixed per-call costs dominate, not the layers.")
    return Claim("distilbert", claim, paper, source, measured, "not reproduced", why)


def _distil_paper_ratios() -> tuple[float, float]:
    score = [_row("glue-dev", m, "score", "(DistilBERT), Table 1").value or 1.0 for m in ("DistilBERT", "BERT-base")]
    sec = [_row("cpu-inference", m, "inference_seconds", "(DistilBERT), Table 3").value or 1.0
           for m in ("BERT-base", "DistilBERT")]
    return score[0] / score[1], sec[0] / sec[1]


_NOT_LEARNED = ("The held-out loss has barely moved from its starting value (less than 10% lower): the models have "
                "not learned enough yet for their difference to mean anything. Give the benchmark more steps.")


def _learned(v: VariantRun) -> bool:
    """Whether a run's held-out loss fell by at least 10%: below that, differences are initialisation noise."""
    return v.heldout_loss <= 0.9 * v.heldout_loss_first


def _loss_verdict(better: float) -> str:
    return ("reproduced" if better > LOSS_MARGIN else "not reproduced" if better < -LOSS_MARGIN
            else "not measurable at this size")


def roberta(m: Measurement) -> Claim:
    paper, source = _paper([("roberta-ablation-dev", "RoBERTa (BOOKS + WIKI", "mnli_m", "(RoBERTa), Table 4"),
                            ("roberta-ablation-dev", "BERT-large (BOOKS + WIKI", "mnli_m", "(RoBERTa), Table 4")],
                           "MNLI-m dev {0} (RoBERTa, 16GB, 100K steps of 8K) vs {1} (BERT-large, 13GB); the "
                           "static/dynamic and NSP ablations (its Tables 1-2) are not in the project's tables")
    claim = "RoBERTa (dynamic masking, no NSP) learns a better masked LM than BERT (static masking + NSP)"
    gap = _missing(m, "roberta", "bert", "mlm")
    if gap:
        return Claim("roberta", claim, paper, source, "-", "not measured", gap)
    r, b, s = m.variants["roberta"], m.variants["bert"], m.variants["mlm"]
    if None in (r.heldout_mlm_loss, b.heldout_mlm_loss, s.heldout_mlm_loss):
        return Claim("roberta", claim, paper, source, "-", "not measured", "No held-out MLM loss was measured.")
    lr, lb, ls = float(r.heldout_mlm_loss or 0), float(b.heldout_mlm_loss or 0), float(s.heldout_mlm_loss or 0)
    measured = (f"held-out MLM loss {lr:.3f} (RoBERTa) vs {lb:.3f} (BERT + NSP); control {ls:.3f} (BERT MLM, static, "
                f"no NSP): BERT + NSP {lb - ls:+.3f} and RoBERTa {lr - ls:+.3f} against it; {r.epochs:.2f} epochs seen")
    if not (_learned(r) and _learned(b)):
        return Claim("roberta", claim, paper, source, measured, "not measurable at this size", _NOT_LEARNED)
    verdict = _loss_verdict(1 - lr / lb)
    once = ("Less than one epoch was seen, so dynamic and static masking drew the same corruption: only dropping NSP "
            "(which gives the MLM whole windows instead of sentence pairs) is tested here. ") if r.epochs < 1 else ""
    why = {"reproduced": "RoBERTa's recipe reaches a lower held-out MLM loss on the same tokens.",
           "not reproduced": "BERT's recipe reaches a lower held-out MLM loss here.",
           "not measurable at this size": f"The losses are within {LOSS_MARGIN:.0%} of each other."}[verdict]
    return Claim("roberta", claim, paper, source, measured, verdict, once + why)


def measure(*args: Any, **kwargs: Any) -> Measurement:
    """:func:`explorer.training.measurement.measure` (trains and probes: minutes)."""
    # torch and transformers: loaded only when measuring, never to read the committed results
    from explorer.training import measurement

    return measurement.measure(*args, **kwargs)


def table(m: Measurement) -> list[Claim]:
    """Every claim row, from one measurement (missing families give 'not measured' rows, never an error)."""
    return [electra(m), albert(m), distilbert(m), roberta(m)]


def report(m: Measurement) -> Report:
    return Report(m, tuple(table(m)))


def _cell(text: str) -> str:
    return str(text).replace("|", "/").replace("\n", " ")


def markdown(rep: Report) -> str:
    """The table as Markdown, with the budget and machine of the measurement."""
    m = rep.measurement
    lines = [f"# Pretraining lab: the papers' claims, reproduced ({m.date})", "",
             f"Budget: {m.budget_steps} steps x {m.batch_tokens} tokens per objective ({m.size} size, seq_len "
             f"{m.seq_len}, seed {m.seed}, {m.device}); ELECTRA on BERT MLM's training FLOPs. Probe: "
             f"{m.probe_spec.get('steps')} steps x {m.probe_spec.get('batch')} examples, lr {m.probe_spec.get('lr')}, "
             f"{m.probe_spec.get('test_examples')} held-out test examples (majority baseline 0.5). Machine: "
             f"{m.machine}. Took {m.seconds:.0f} s.", "",
             "| claim | paper | source | measured here | verdict | why |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(_cell(v) for v in (r.claim, r.paper, r.source, r.measured, r.verdict, r.why)) + " |"
              for r in rep.rows]
    if m.missing:
        lines += ["", "Not trainable in this build (rows say 'not measured'): "
                  + ", ".join(f"{o} (needs the {f} family)" for o, f in m.missing.items()) + "."]
    return "\n".join(lines) + "\n"


def write(rep: Report, json_path: Path = RESULTS_JSON) -> tuple[Path, Path]:
    """The JSON (and the Markdown beside it)."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    md_path = json_path.with_suffix(".md")
    json_path.write_text(json.dumps(rep.to_dict(), indent=1) + "\n", encoding="utf-8")
    md_path.write_text(markdown(rep), encoding="utf-8")
    return json_path, md_path


def stamp(path: Path | None = None) -> int:
    """The results file's modification time in ns (-1 if absent): a cache key that changes when it is rewritten."""
    path = path or RESULTS_JSON
    return path.stat().st_mtime_ns if path.is_file() else -1


def load(path: Path | None = None) -> Report:
    """The committed measurement, with its rows recomputed from the numbers (so the words follow the code)."""
    path = path or RESULTS_JSON
    if not path.is_file():
        raise ExplorerError(f"No pretraining claims measured yet ({path.name} is missing): run "
                            "python benchmarks/pretrain_claims.py.")
    try:
        return report(Measurement.from_dict(json.loads(path.read_text(encoding="utf-8"))["measurement"]))
    except (ValueError, KeyError, TypeError) as err:
        raise ExplorerError(f"{path.name} is not a claims measurement ({str(err)[:80]}): rerun "
                            "python benchmarks/pretrain_claims.py.") from err
