"""The same task file as an lm-evaluation-harness task: a YAML that reads the JSONL locally (no hub download).

lm-eval 0.4 reads a task from a YAML file found in a folder given to its ``TaskManager(include_path=...)`` (or
``lm_eval --include_path``). With ``dataset_path: json`` and ``data_files`` it loads the file with ``datasets``'
JSON builder, which works offline (``HF_DATASETS_OFFLINE=1``). The templates map this explorer's shapes to lm-eval's
outputs: multiple choice (``doc_to_choice: choices``, the default ``target_delimiter`` of one space, ``acc`` and
``acc_norm``), cloze (``output_type: loglikelihood``, the continuation verbatim, ``acc`` = greedy match), and rolling
perplexity of a ``{"text"}`` line (``loglikelihood_rolling``: word perplexity, byte perplexity, bits per byte).

>>> print(task_yaml("mine", "choice", "/data/mine.jsonl"))  # doctest: +ELLIPSIS
task: mine
dataset_path: json
dataset_kwargs:
  data_files:
    test: "/data/mine.jsonl"
test_split: test
output_type: multiple_choice
doc_to_text: "{{context}}"
doc_to_choice: "{{choices}}"
doc_to_target: "{{answer}}"
...
"""

from __future__ import annotations

import json
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.evaluation.task import CHOICE, CLOZE

__all__ = ["ROLLING", "task_yaml", "write_task"]

ROLLING = "rolling"  # a {"text"} file scored by loglikelihood_rolling
_KINDS = {
    CHOICE: ('output_type: multiple_choice\ndoc_to_text: "{{context}}"\ndoc_to_choice: "{{choices}}"\n'
             'doc_to_target: "{{answer}}"\nmetric_list:\n  - metric: acc\n  - metric: acc_norm\n'),
    CLOZE: ('output_type: loglikelihood\ndoc_to_text: "{{context}}"\ndoc_to_target: "{{continuation}}"\n'
            'metric_list:\n  - metric: acc\n  - metric: perplexity\n'),
    ROLLING: ('output_type: loglikelihood_rolling\ndoc_to_text: ""\ndoc_to_target: "{{text}}"\nmetric_list:\n'
              '  - metric: word_perplexity\n  - metric: byte_perplexity\n  - metric: bits_per_byte\n'),
}


def task_yaml(name: str, kind: str, data: str | Path) -> str:
    """An lm-eval task ``name`` reading the JSONL ``data`` (a path) as ``kind`` (choice, cloze or rolling)."""
    if kind not in _KINDS:
        raise ExplorerError(f"No lm-eval template for {kind!r}: one of {', '.join(_KINDS)}.")
    return (f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {json.dumps(str(data))}\n"
            f"test_split: test\n{_KINDS[kind]}")


def write_task(folder: Path, name: str, kind: str, data: str | Path) -> Path:
    """``folder/name.yaml`` written (the folder to give lm-eval's ``TaskManager(include_path=...)``)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{name}.yaml"
    out.write_text(task_yaml(name, kind, Path(data).resolve()), encoding="utf-8")
    return out
