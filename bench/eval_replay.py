"""How long a replayed eval matrix takes: 3 model sizes x 3 prompt variants x the whole suite.

No model answers are committed (this machine has no key), so the script first records answers
from an emulated model (a stand-in that judges from the evidence gate's findings; it is not
Claude) into a temporary folder, then times the replay of the whole matrix from those recordings
alone, next to the strict judge's run of the same matrix. The replay goes through the real
anthropic SDK and the same code path a replay of real recordings takes. Target: 540 replayed runs
in 30 s or less. Run: ``python bench/eval_replay.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from validator.evals import packaged  # noqa: E402
from validator.evals.cases import load_cases  # noqa: E402
from validator.evals.emulated import emulated_model  # noqa: E402
from validator.evals.recording import RecordingTransport  # noqa: E402
from validator.evals.runner import PROMPTS, judge_view, run_matrix, slug  # noqa: E402

from validator import Policy  # noqa: E402
from validator.judges.anthropic.judge import AnthropicJudge  # noqa: E402
from validator.judges.blind import VIEWS  # noqa: E402

MODELS = ["anthropic:emulated-small", "anthropic:emulated-medium", "anthropic:emulated-large"]


def main() -> int:
    cases = load_cases(
        packaged.cases_path(),
        Policy.load(packaged.policy_path()),
    )
    folder = Path(tempfile.mkdtemp())

    def record(spec: str, prompt: str) -> Any:
        transport = RecordingTransport(
            folder / slug(spec) / f"{prompt}.jsonl", httpx2.MockTransport(emulated_model), label=spec
        )
        client = anthropic.Anthropic(
            api_key="sk-emulated", max_retries=0, http_client=httpx2.Client(transport=transport)
        )
        return AnthropicJudge(spec.split(":", 1)[1], client=client, **judge_view(prompt)), None

    run_matrix(cases, judges=MODELS, prompts=list(PROMPTS), factory=record, views=VIEWS)
    start = time.perf_counter()
    replayed = run_matrix(cases, judges=MODELS, prompts=list(PROMPTS), replay=True, recordings=folder, views=VIEWS)
    replay_s = time.perf_counter() - start
    start = time.perf_counter()
    strict = run_matrix(cases, judges=["strict"], prompts=list(PROMPTS))
    strict_s = time.perf_counter() - start
    assert not replayed.missing_recordings, replayed.missing_recordings
    n = len(replayed.runs)
    rows = 1 + len(PROMPTS)  # the blind view's row and the shared prefix's prompts
    shape = f"{len(cases)} cases x {rows} rows (blind + {len(PROMPTS)} prompts) x {len(MODELS)} emulated models"
    print(f"{shape} = {n} replayed runs")
    per_run = replay_s / n * 1000
    print(f"replayed matrix: {replay_s:.2f} s ({per_run:.1f} ms a run)")
    print(f"strict judge, {len(strict.runs)} runs: {strict_s:.2f} s")
    for_540 = replay_s * 540 / n
    print(f"target 540 replayed runs in <= 30 s: {'met' if for_540 <= 30 else 'NOT met'} ({for_540:.1f} s for 540)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
