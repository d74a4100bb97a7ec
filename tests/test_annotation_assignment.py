"""Serving order (eval_ui/store/assignment.py ``next_item``): overlap first, so agreement exists after a
few labels.

Issue 19 item 1: with three annotators and k = 2, items that another annotator has labelled and that
still lack their k-th label come before fresh ones (Label Studio's ``show_overlap_first``); ``balanced``
keeps each annotator's own random order. The left/right swap stays per (annotator, item).
"""

from __future__ import annotations

from collections import Counter

import pytest

from eval_ui.items import Item
from eval_ui.service import AnnotationService
from eval_ui.store import ASSIGNMENT_MODES, AnnotationStore, LabelInput, StoreError
from lawluo.config import ConfigError, Settings, load_settings

NAMES = ("张", "李", "王")


def build(path, mode: str, seed: int = 0, n_items: int = 12) -> AnnotationStore:
    store = AnnotationStore(path, assignment=mode)
    store.import_items(
        [Item(f"q{i}", f"问题{i}", f"甲{i}", f"乙{i}", "sysA", "sysB") for i in range(n_items)]
    )
    for name in NAMES:
        store.add_annotator(name)
    store.assign(overlap=2, seed=seed)
    return store


def assigned_to(store: AnnotationStore, item_id: str) -> set[str]:
    return {r[0] for r in store._all("SELECT annotator FROM assignments WHERE item_id = ?", (item_id,))}


def label_in_turns(store: AnnotationStore, rounds: int) -> list[tuple[str, str]]:
    """Each annotator in turn takes their next item and labels it; (annotator, item) in order."""
    done = []
    for r in range(rounds):
        for name in NAMES:
            shown = store.next_item(name)
            store.save_label(name, shown.item.id, LabelInput("tie"), f"{name}-{r}")
            done.append((name, shown.item.id))
    return done


@pytest.mark.parametrize("seed", range(5))
def test_overlap_first_gives_every_annotator_a_shared_first_item_and_agreement_after_two_labels(
    tmp_path, seed
):
    store = build(tmp_path / "a.sqlite", "overlap_first", seed)
    # annotators who open the tab at the same moment, before anyone has labelled: the two who share
    # the first item of the common order both start on it
    firsts = [store.next_item(name).item.id for name in NAMES]
    assert max(Counter(firsts).values()) == 2

    done = label_in_turns(store, rounds=2)
    per_item = Counter(item for _, item in done)
    assert per_item.most_common(1)[0][1] == 2  # after two labels each, an item has k = 2 labels
    for name in NAMES:  # every one's first labelled item is labelled by another annotator too
        first = next(item for who, item in done if who == name)
        assert per_item[first] == 2, (name, first, done)
    store.close()


def test_overlap_first_serves_an_item_waiting_for_its_kth_label_before_fresh_ones(tmp_path):
    store = build(tmp_path / "a.sqlite", "overlap_first", n_items=30)
    store.add_annotator("管理员", role="admin")
    fresh = store.next_item("李").item.id
    pair = [f"q{k}" for k in range(30) if f"q{k}" != fresh]
    shared = next(i for i in pair if assigned_to(store, i) == {"张", "李"})
    store.save_label("张", shared, LabelInput("left"), "zhang-1")
    assert store.next_item("李").item.id == shared  # waiting for 李's label: served first
    store.save_label("李", shared, LabelInput("right"), "li-1")
    assert store.next_item("李").item.id == fresh  # back to the common order

    other = next(i for i in pair if assigned_to(store, i) == {"李", "王"})
    store.save_label("王", other, LabelInput("tie"), "wang-1")
    assert store.next_item("李").item.id == other
    # once others have given the item its k = 2 labels (an admin labelled it too), it is not pulled
    # forward any more: 李 labels it in the common order
    store.save_label("管理员", other, LabelInput("tie"), "admin-1")
    assert store.next_item("李").item.id == fresh
    store.close()


def test_balanced_keeps_each_annotators_own_random_order(tmp_path):
    store = build(tmp_path / "a.sqlite", "balanced")
    for name in NAMES:
        own = store._all(
            "SELECT item_id FROM assignments WHERE annotator = ? ORDER BY position, item_id", (name,)
        )
        assert store.next_item(name).item.id == own[0][0]
    done = label_in_turns(store, rounds=3)
    for name in NAMES:  # others' labels do not change anyone's order
        own = [
            r[0]
            for r in store._all(
                "SELECT item_id FROM assignments WHERE annotator = ? ORDER BY position, item_id", (name,)
            )
        ]
        assert [item for who, item in done if who == name] == own[:3]
    store.close()


def test_both_orders_are_deterministic_and_keep_the_per_annotator_swap(tmp_path):
    def served(path, mode):
        store = build(path, mode, seed=3)
        done = label_in_turns(store, rounds=4)
        swaps = {(a, i): s for a, i, s in store._all("SELECT annotator, item_id, swapped FROM assignments")}
        shown = {(name, store.next_item(name).item.id): store.next_item(name).swapped for name in NAMES}
        store.close()
        return done, swaps, shown

    first, swaps, shown = served(tmp_path / "a.sqlite", "overlap_first")
    again, swaps_again, _ = served(tmp_path / "b.sqlite", "overlap_first")
    balanced, swaps_balanced, _ = served(tmp_path / "c.sqlite", "balanced")
    assert first == again  # same seed, same order
    assert swaps == swaps_again == swaps_balanced  # the mode never touches the left/right order
    assert 0 < sum(swaps.values()) < len(swaps)
    assert all(swapped == bool(swaps[key]) for key, swapped in shown.items())
    assert first != balanced


def test_an_unknown_mode_is_refused_by_the_store_and_the_settings(tmp_path, monkeypatch):
    with pytest.raises(StoreError, match="assignment 'random' is not one of overlap_first, balanced"):
        AnnotationStore(tmp_path / "a.sqlite", assignment="random")
    assert Settings().annotation_assignment == "overlap_first"
    for mode in ASSIGNMENT_MODES:  # the settings accept exactly the store's modes
        assert load_settings(None, {"LAWLUO_ANNOTATION_ASSIGNMENT": mode}).annotation_assignment == mode
    with pytest.raises(ConfigError, match="annotation_assignment must be overlap_first or balanced"):
        load_settings(None, {"LAWLUO_ANNOTATION_ASSIGNMENT": "random"})


def test_the_service_opens_the_store_with_the_configured_mode(tmp_path):
    for mode in ASSIGNMENT_MODES:
        settings = Settings(annotation_dir=tmp_path / mode, annotation_assignment=mode)
        service = AnnotationService.from_settings(settings, demo=False)
        assert service.store.assignment_mode == mode
        assert service.store.cited == service.statute_keys  # the checker's statutes, for "none wrong"
        service.store.close()
