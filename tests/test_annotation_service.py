"""Who is signed in, and what the first start puts in the store (eval_ui/service.py)."""

from __future__ import annotations

import pytest

from eval_ui.auth import UsersError
from eval_ui.service import AnnotationService, read_guidelines
from lawluo.config import Settings
from lawluo.ui.copy import languages


def service(tmp_path, monkeypatch=None, **settings) -> AnnotationService:
    return AnnotationService.from_settings(Settings(annotation_dir=tmp_path / "ann", **settings))


def test_first_start_seeds_the_demo_items_and_assigns_them_to_the_users(tmp_path):
    s = service(tmp_path, annotation_users="root:r:admin,alice:a,bob:b")
    assert s.sign_in == "password" and s.store.item_count() == 60
    assert s.store.progress("alice") == (0, 60) and s.store.progress("bob") == (0, 60)
    assert s.store.progress("root") == (0, 0)  # admins are not assigned items
    again = service(tmp_path, annotation_users="root:r:admin,alice:a,bob:b")  # restart: nothing doubled
    assert again.store.item_count() == 60 and again.store.progress("alice") == (0, 60)


def test_the_users_file_decides_who_is_signed_in_and_their_role(tmp_path):
    s = service(tmp_path, annotation_users="root:r:admin,alice:a")
    assert s.identify("root").is_admin and not s.identify("alice").is_admin
    assert s.identify("mallory") is None and s.identify(None) is None
    assert s.identify(None, oauth_name="alice") is None  # no Hugging Face sign-in when a users file is set
    promoted = service(tmp_path, annotation_users="root:r:admin,alice:a:admin")  # the file changed
    assert promoted.identify("alice").is_admin and promoted.store.role("alice") == "admin"


def test_hugging_face_sign_in_on_a_space(tmp_path, monkeypatch):
    monkeypatch.setenv("SPACE_ID", "lawluo/lawluo")
    monkeypatch.setenv("OAUTH_CLIENT_ID", "client-id")
    s = service(tmp_path, annotation_admins="prof-wang")
    assert s.sign_in == "oauth"
    assert s.identify(None, oauth_name="lawyer-li") is None  # signing in invites nobody
    for name in ("lawyer-li", "lawyer-zhao"):
        s.store.invite(name, by="prof-wang")
    first = s.identify(None, oauth_name="lawyer-li")
    assert first.role == "annotator" and s.store.progress("lawyer-li") == (0, 60)  # one annotator: k = 1
    s.identify(None, oauth_name="lawyer-zhao")
    assert s.store.progress("lawyer-zhao") == (0, 60)  # topped up to k = 2
    assert s.identify(None, oauth_name="prof-wang").is_admin
    assert s.identify("someone") is None  # a Gradio username means nothing without a users file


def test_without_sign_in_configured_nobody_annotates(tmp_path, monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    s = service(tmp_path)
    assert s.sign_in is None and s.identify("alice") is None and s.identify(None, "alice") is None


def test_a_malformed_users_setting_stops_with_the_entry_named(tmp_path):
    with pytest.raises(UsersError, match="entry 2"):
        service(tmp_path, annotation_users="alice:a,bob")


def test_guidelines_carry_their_version_in_chinese_and_in_english():
    version, text = read_guidelines()
    assert "---" not in text[:5] and version == "1"
    both = languages(text)
    assert both["zh"].startswith("# 标注指南（第 1 版）") and both["en"].startswith(
        "# Annotation guidelines (version 1)"
    )
