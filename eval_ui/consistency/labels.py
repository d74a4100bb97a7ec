"""Reading the store's label frames for the report: current rows only, and explicit statute labels."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _current(frame: pd.DataFrame) -> pd.DataFrame:
    """Only current rows (a frame with every version has ``current`` False on the older ones), text
    columns as Python objects: walking pandas' Arrow-backed text element by element is slow."""
    if "current" in frame.columns and len(frame):
        frame = frame[frame["current"].astype(bool)]
    text = {
        c: object
        for c in frame.columns
        if pd.api.types.is_string_dtype(frame[c]) and frame[c].dtype != object
    }
    return frame.astype(text).reset_index(drop=True)


def _explicit(statutes: pd.DataFrame) -> pd.DataFrame:
    """Statute rows with an explicit label (hallucinated True or False): unlabelled and legacy rows are missing."""
    if statutes.empty or "hallucinated" not in statutes.columns:
        return statutes.iloc[0:0]
    yes, no = _yes_no(statutes["hallucinated"])
    out = statutes[yes | no].copy()
    out["hallucinated"] = yes[yes | no]
    return out


def _yes_no(flags: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(labelled hallucinated, labelled correct) per statute row; None / NaN (unlabelled, legacy) is neither."""
    values = flags.to_numpy(dtype=object)
    return values == True, values == False  # noqa: E712 - elementwise on an object array: None is neither
