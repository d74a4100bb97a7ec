"""The app's texts and the secretary's examples come from the folders the settings name (no built-in path)."""

from __future__ import annotations

import os
import shutil

from lawluo.build import copy_app_texts
from lawluo.config import Settings, load_settings
from lawluo.firm import Firm
from lawluo.llm import LanguageModels

from .conftest import ROOT


def test_the_texts_and_examples_folders_follow_the_assets_folder_unless_named(tmp_path):
    settings = Settings(assets_dir=tmp_path)
    assert settings.ui_copy_dir == tmp_path / "ui"
    assert settings.report_examples_dir == tmp_path / "report_examples"
    named = Settings(assets_dir=tmp_path, ui_copy_dir=tmp_path / "texts")
    assert named.ui_copy_dir == tmp_path / "texts"


def _config(tmp_path, **keys):
    path = tmp_path / "lawluo.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in keys.items()), encoding="utf-8")
    return load_settings(path, environ={"LAWLUO_CACHE_DIR": os.environ["LAWLUO_CACHE_DIR"]})


def test_the_secretary_learns_from_the_examples_of_the_configured_folder(tmp_path, firm_services):
    folder = tmp_path / "examples"
    folder.mkdir()
    shipped = sorted((ROOT / "assets" / "report_examples").glob("*.json"))
    shutil.copy(shipped[0], folder / "only.json")
    settings = _config(tmp_path, report_examples_dir=folder)

    firm = Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)

    assert [e.source.name for e in firm.secretary.examples] == ["only.json"]


def test_a_missing_examples_folder_is_named_when_the_firm_loads(tmp_path, firm_services):
    settings = _config(tmp_path, report_examples_dir=tmp_path / "nowhere")
    try:
        Firm.from_settings(settings, models=LanguageModels(settings.models), **firm_services)
    except FileNotFoundError as exc:
        assert str(tmp_path / "nowhere") in str(exc)
    else:
        raise AssertionError("a firm without report examples loaded")


def test_the_app_shows_the_texts_of_the_configured_folder(tmp_path):
    from app import build_app

    texts = tmp_path / "texts"
    shutil.copytree(ROOT / "assets" / "ui", texts)
    (texts / "about.md").write_text("# 本所自定义的关于页 marker-7f3a", encoding="utf-8")

    demo = build_app(_config(tmp_path, ui_copy_dir=texts))

    shown = [b.value for b in demo.blocks.values() if isinstance(getattr(b, "value", None), str)]
    assert any("marker-7f3a" in text for text in shown)
    demo.close()


def test_building_into_a_new_assets_folder_gives_it_the_texts_and_never_overwrites_them(tmp_path):
    settings = Settings(assets_dir=tmp_path / "built")
    assert copy_app_texts(settings) == [
        str(settings.ui_copy_dir),
        str(settings.report_examples_dir),
        str(settings.assets_dir / "colloquial_terms.tsv"),  # hand-written inputs of the search steps
        str(settings.assets_dir / "eval" / "guidelines.md"),
    ]
    assert (settings.ui_copy_dir / "consult.md").read_text(encoding="utf-8") == (
        ROOT / "assets" / "ui" / "consult.md"
    ).read_text(encoding="utf-8")
    (settings.ui_copy_dir / "consult.md").write_text("edited", encoding="utf-8")

    assert copy_app_texts(settings) == []
    assert (settings.ui_copy_dir / "consult.md").read_text(encoding="utf-8") == "edited"
    assert copy_app_texts(Settings()) == []  # the repository's own folders are the source
