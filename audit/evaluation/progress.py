"""The evaluation tools' progress bar (a leaf module: the CLI and the fits import it, it imports none of them)."""

from __future__ import annotations

import sys


def text_bar(total: int, desc: str, stream=None):
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=desc,
        unit="claim" if "claim" in desc else "answer",
        file=stream or sys.stderr,
        dynamic_ncols=True,
        mininterval=0.5,
    )
