"""The backup to a private Hugging Face dataset repo: a snapshot and every export, never the live file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .annotation_store import AnnotationStore
from .frames import Cited

if TYPE_CHECKING:
    from huggingface_hub import CommitScheduler

#: The store's file in the app's data folder (what :func:`start_sync` backs up).
STORE_FILENAME = "annotations.sqlite"


def write_hub_folder(db: str | Path, folder: str | Path, cited: Cited | None = None) -> list[Path]:
    """What the Hub push uploads, written into ``folder``: a snapshot of the database ``db`` (SQLite's
    backup API, never the live file) and every export of :meth:`AnnotationStore.export_all` (``cited``:
    as the store's, for the unlabelled statutes); nothing when ``db`` does not exist yet. Returns the
    paths written."""
    db, folder = Path(db), Path(folder)
    if not db.exists():
        return []
    store = AnnotationStore(db, cited=cited)
    try:
        return [store.snapshot(folder / db.name), *store.export_all(folder)]
    finally:
        store.close()


def start_sync(
    data_dir: str | Path,
    repo_id: str | None,
    every_minutes: float = 10,
    token: str | None = None,
    cited: Cited | None = None,
) -> CommitScheduler | None:
    """Back the store up to a private Hugging Face dataset repo every ``every_minutes``; None without a repo.

    The live database is never uploaded while it is being written: before each scheduled commit
    :func:`write_hub_folder` takes a snapshot with SQLite's backup API and writes the exports (CSV,
    JSONL, Parquet; ``cited`` lists each answer's statutes, as the app's store has them) into
    ``data_dir/hub_snapshot/``, and only that folder is uploaded
    (``huggingface_hub.CommitScheduler``, which skips unchanged files).
    """
    if not repo_id:
        return None
    from huggingface_hub import CommitScheduler

    data_dir = Path(data_dir)
    folder = data_dir / "hub_snapshot"
    folder.mkdir(parents=True, exist_ok=True)
    db = data_dir / STORE_FILENAME

    class SnapshotScheduler(CommitScheduler):
        def push_to_hub(self):  # runs in the scheduler's thread, one at a time
            write_hub_folder(db, folder, cited)
            return super().push_to_hub()

    return SnapshotScheduler(
        repo_id=repo_id,
        repo_type="dataset",
        folder_path=folder,
        every=every_minutes,
        token=token,
        private=True,
        ignore_patterns=["*.tmp", ".*.tmp"],
    )
