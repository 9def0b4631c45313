"""The eval suite that ships with the package: its cases, the policy they run under, the baseline of
outcomes and the folder of recorded model answers. ``validator eval`` runs it unless told another
suite (``--cases``); a checkout and an editable install read the repository's own files."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SUITE", "baseline_path", "cases_path", "policy_path", "recordings_path"]

SUITE = Path(__file__).resolve().parent / "suite"


def cases_path() -> Path:
    return SUITE / "cases.jsonl"


def policy_path() -> Path:
    return SUITE / "policy.toml"


def baseline_path() -> Path:
    return SUITE / "baseline.json"


def recordings_path() -> Path:
    return SUITE / "recordings"
