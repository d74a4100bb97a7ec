"""Annotators by invitation, reservations that expire, the audit log and the secret swap draws.

The attack this answers (a Space with Hugging Face sign-in, ``LAWLUO_ANNOTATION_ADMINS=realadmin``):
three strangers signed in; the first two were assigned all 60 items (k = 2) and their labels entered the
statistics, lawyers who came later got nothing, and the left/right swaps followed from the public seed 0.
Each test here fails on the code before the fix.
"""

from __future__ import annotations

import html
import json
import sqlite3
from types import SimpleNamespace

import gradio as gr
import pytest

from eval_ui import adjudicate_tab, annotate_tab
from eval_ui.auth import parse_users
from eval_ui.items import Item
from eval_ui.service import STORE_FILE, AnnotationService, profile_orgs
from eval_ui.store import MIGRATIONS, AnnotationStore, LabelInput, StoreError, StoreWriteError
from lawluo.config import Settings, load_settings

from .eval_commands import run

DAY = 24 * 3600.0
WEEK = 7 * DAY


class Clock:
    """A fake clock for the store: ``clock.now`` seconds since the epoch, moved by the test."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def items(n: int, prefix: str = "q") -> list[Item]:
    return [
        Item(f"{prefix}{i}", f"问题{i}", f"甲的回答{i}", f"乙的回答{i}", "sysA", "sysB") for i in range(n)
    ]


def profile(username: str, *orgs: str, display: str | None = None) -> gr.OAuthProfile:
    """What Gradio injects for a Hugging Face sign-in: the OpenID userinfo, with Hugging Face's ``orgs``."""
    return gr.OAuthProfile(
        {
            "sub": f"id-{username}",
            "name": username.title(),
            "preferred_username": username,
            "profile": f"https://huggingface.co/{username}",
            "picture": "https://huggingface.co/avatar.png",
            "orgs": [
                {
                    "sub": f"org-{o}",
                    "name": display or o.title(),
                    "preferred_username": o,
                    "isEnterprise": False,
                }
                for o in orgs
            ],
        }
    )


@pytest.fixture
def on_a_space(monkeypatch):
    """The variables a Space with ``hf_oauth: true`` sets."""
    monkeypatch.setenv("SPACE_ID", "lawluo/lawluo")
    monkeypatch.setenv("OAUTH_CLIENT_ID", "client-id")


def space_service(tmp_path, **settings) -> AnnotationService:
    """The app's service on a Space (60 demo items, k = 2), as ``from_settings`` builds it."""
    settings.setdefault("annotation_admins", "realadmin")
    return AnnotationService.from_settings(Settings(annotation_dir=tmp_path / "ann", **settings))


def tab_view(view) -> dict:
    return vars(view)


# -- 1. annotators by invitation ------------------------------------------------------------------


def test_strangers_who_sign_in_with_hugging_face_get_no_identity_and_nothing_is_stored(tmp_path, on_a_space):
    service = space_service(tmp_path)
    assert service.sign_in == "oauth" and service.store.item_count() == 60
    for stranger in ("stranger-1", "stranger-2", "stranger-3"):
        assert service.identify(None, stranger) is None
        opened = tab_view(annotate_tab.open_annotation(service, None, profile(stranger)))
        assert "您尚未受邀参加标注" in opened["message"] and "请联系管理员" in opened["message"]
        assert opened["message"].index("您尚未受邀") < opened["message"].index("You have not been invited")
        assert stranger in opened["message"] and opened["state"] == {}  # no item shown
        form = annotate_tab.LabelForm.from_inputs({"item_id": "x"})
        saved = annotate_tab.submit_label(service, "left", form, None, profile(stranger))
        assert "您尚未受邀参加标注" in saved.message
    store = service.store
    assert store.annotators() == [] and store.progress("stranger-1") == (0, 0)
    assert store._one("SELECT COUNT(*) FROM assignments")[0] == 0
    assert store.labels_frame().empty
    assert [e["action"] for e in store.audit_log()] == ["import"]  # the demo items; no sign-up
    assert service.identify(None, "realadmin").is_admin  # the admins named in the setting are let in


def test_an_invited_account_gets_work_and_an_admin_invitation_makes_an_admin(tmp_path, on_a_space):
    service = space_service(tmp_path)
    service.invite("lawyer-li", "annotator", "realadmin")
    service.invite("prof-wang", "admin", "realadmin")
    who = annotate_tab.identify(service, None, profile("lawyer-li"))
    assert who.role == "annotator" and service.store.progress("lawyer-li") == (0, 60)
    shown = tab_view(annotate_tab.open_annotation(service, None, profile("lawyer-li")))
    assert shown["state"]["item_id"]
    assert service.identify(None, "prof-wang").is_admin and service.store.role("prof-wang") == "admin"
    assert service.store.annotators()[0]["joined_via"] == "invitation"


def test_members_of_a_listed_organisation_get_in_and_others_do_not(tmp_path, on_a_space):
    service = space_service(tmp_path, annotation_orgs="LawFirm, bar-assoc")
    member = profile("lawyer-wu", "other-org", "lawfirm")  # handles compare case-insensitively
    assert profile_orgs(member) == ("other-org", "lawfirm")
    who = annotate_tab.identify(service, None, member)
    assert who is not None and who.role == "annotator"
    assert service.store.progress("lawyer-wu") == (0, 60)
    [row] = service.store.annotators()
    assert row["joined_via"] == "org:lawfirm"
    # an organisation whose display name looks like a listed one, no organisations, no orgs claim
    lookalike = profile("mallory", "evil-org", display="lawfirm")
    bare = gr.OAuthProfile({k: v for k, v in profile("eve").items() if k != "orgs"})
    for outsider in (lookalike, profile("eve"), bare):
        assert annotate_tab.identify(service, None, outsider) is None
    assert [a["name"] for a in service.store.annotators()] == ["lawyer-wu"]


def test_a_users_file_still_decides_alone(tmp_path, on_a_space):
    service = space_service(tmp_path, annotation_users="root:r:admin,alice:a")
    assert service.sign_in == "password"
    assert service.identify("alice").role == "annotator" and service.identify("root").is_admin
    assert service.identify(None, "realadmin") is None  # no Hugging Face sign-in beside the file
    assert service.store.progress("alice") == (0, 60)
    signups = [
        (e["subject"], e["details"]["via"]) for e in service.store.audit_log() if e["action"] == "signup"
    ]
    assert sorted(signups) == [("alice", "users_file"), ("root", "users_file")]


def test_withdrawing_an_invitation_locks_out_and_releases_the_unlabelled_items(tmp_path, on_a_space):
    service = space_service(tmp_path)
    for name in ("lawyer-li", "lawyer-zhao"):
        service.invite(name, "annotator", "realadmin")
        service.identify(None, name)
    first = service.store.next_item("lawyer-li")
    service.store.save_label("lawyer-li", first.item.id, LabelInput("left"), "s1")
    service.invite("lawyer-sun", "annotator", "realadmin")
    service.identify(None, "lawyer-sun")
    assert service.store.progress("lawyer-sun") == (0, 0)  # every item has its k = 2, none is idle
    assert service.uninvite("lawyer-li", "realadmin") == 59
    assert service.store.progress("lawyer-li") == (1, 1)  # the label and its assignment stay
    assert service.store.label("lawyer-li", first.item.id)["verdict"] in ("A", "B")
    assert service.identify(None, "lawyer-li") is None and "lawyer-li" not in service.pool()
    assert service.store.progress("lawyer-sun") == (0, 59)  # the released items went to the others


# -- 2. reservations ------------------------------------------------------------------------------


def reserved_store(tmp_path, clock: Clock, idle: float = WEEK) -> AnnotationStore:
    """Four items, both reserved by alice and bob (k = 2)."""
    store = AnnotationStore(tmp_path / STORE_FILE, reserve_idle_s=idle, clock=clock)
    store.import_items(items(4))
    for name in ("alice", "bob"):
        store.add_annotator(name)
    assert store.assign(overlap=2, seed=0) == 8
    return store


def holders(store: AnnotationStore) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in store._all("SELECT item_id, annotator FROM assignments"):
        out.setdefault(r[0], set()).add(r[1])
    return out


def test_an_untouched_reservation_goes_to_a_newcomer_after_the_idle_time(tmp_path):
    clock = Clock()
    store = reserved_store(tmp_path, clock)
    labelled = store.next_item("alice").item.id
    store.save_label("alice", labelled, LabelInput("tie"), "a1")
    store.add_annotator("carol")
    clock.now += WEEK - 60  # not idle long enough yet
    assert store.assign(overlap=2, seed=0) == 0 and store.progress("carol") == (0, 0)
    shown = store.next_item("bob").item.id  # bob looks at one item: that reservation is fresh again
    clock.now += 120
    assert store.assign(overlap=2, seed=0) == 3  # the newcomer gets work although k was reached
    after = holders(store)
    assert all(len(h) == 2 for h in after.values())  # still k = 2 per item
    assert "alice" in after[labelled] and "bob" in after[shown]  # a label or a view keeps a reservation
    assert store.progress("carol") == (0, 3) and store.progress("alice") == (1, 2)
    assert store.label("alice", labelled)["verdict"] == "tie"  # labels untouched
    [release] = [e for e in store.audit_log() if e["action"] == "release"]
    assert release["details"]["count"] == 3 and release["details"]["idle_s"] == WEEK
    released_from_bob = [i for a, i in release["details"]["released"] if a == "bob"]
    if (
        released_from_bob
    ):  # bob's page still shows a released item: saving it says so, nothing is lost silently
        with pytest.raises(StoreError, match="is not assigned to 'bob'.*someone else"):
            store.save_label("bob", released_from_bob[0], LabelInput("left"), "b-late")


def test_reservations_never_expire_with_idle_time_zero(tmp_path):
    clock = Clock()
    store = reserved_store(tmp_path, clock, idle=0)
    store.add_annotator("carol")
    clock.now += 365 * DAY
    assert store.assign(overlap=2, seed=0) == 0 and store.progress("carol") == (0, 0)


def test_skipping_touches_a_reservation_and_a_done_item_is_never_released(tmp_path):
    clock = Clock()
    store = reserved_store(tmp_path, clock)
    store.skip("alice", store.next_item("alice").item.id)
    for n, item_id in enumerate(sorted(holders(store))):
        store.save_label("bob", item_id, LabelInput("tie"), f"b{n}")
    clock.now += WEEK + 1
    skipped = store._one("SELECT item_id FROM assignments WHERE status = 'skipped'")[0]
    store.skip("alice", skipped)  # touched now
    store.add_annotator("carol")
    assert store.assign(overlap=2, seed=0) == 3  # alice's three untouched ones, never bob's labelled ones
    assert all("bob" in h for h in holders(store).values()) and "alice" in holders(store)[skipped]


def test_a_newcomer_signing_in_later_gets_work_and_an_annotator_out_of_items_is_topped_up(tmp_path):
    clock = Clock()
    store = AnnotationStore(tmp_path / STORE_FILE, reserve_idle_s=WEEK, clock=clock)
    store.import_items(items(6))
    service = AnnotationService(store, users=parse_users("alice:a,bob:b,carol:c"), overlap=2, seed=0)
    for name in ("alice", "bob"):
        service.identify(name)
    assert store.progress("alice") == (0, 6) and store.progress("bob") == (0, 6)
    assert service.identify("carol").role == "annotator" and store.progress("carol") == (0, 0)
    clock.now += WEEK + 1  # alice and bob went quiet
    carol = SimpleNamespace(username="carol")
    opened = tab_view(annotate_tab.open_annotation(service, carol))  # carol is out of items: topped up
    assert opened["state"]["item_id"] and store.progress("carol")[1] == 6
    assert all(len(h) == 2 for h in holders(store).values())


# -- 3. the audit log -----------------------------------------------------------------------------


def test_every_sign_up_invitation_role_change_import_and_export_is_logged(tmp_path, on_a_space):
    service = space_service(tmp_path)
    service.invite("lawyer-li", "annotator", "realadmin")
    service.identify(None, "lawyer-li")
    service.invite("lawyer-li", "admin", "realadmin")  # promoted: the role changes at the next request
    assert service.identify(None, "lawyer-li").is_admin
    admin = SimpleNamespace(username=None)
    root = profile("realadmin")
    upload = tmp_path / "more.jsonl"
    upload.write_text(
        "".join(json.dumps(vars(i) | {"statutes": []}, ensure_ascii=False) + "\n" for i in items(2, "x")),
        encoding="utf-8",
    )
    imported = annotate_tab.import_items(service, str(upload), admin, root)
    assert "Imported 2 items" in imported.message
    exported = annotate_tab.export_labels(service, "csv", "raw", False, admin, root)
    assert exported.file and "Exported" in exported.message
    service.uninvite("lawyer-li", "realadmin")
    log = service.store.audit_log()
    actions = [(e["actor"], e["action"], e["subject"]) for e in reversed(log)]
    assert actions == [
        ("system", "import", ""),  # the demo items at first start
        ("realadmin", "invite", "lawyer-li"),
        ("lawyer-li", "signup", "lawyer-li"),
        ("realadmin", "invite", "lawyer-li"),
        ("system", "role", "lawyer-li"),
        ("realadmin", "signup", "realadmin"),
        ("realadmin", "import", ""),
        ("realadmin", "export", ""),
        ("realadmin", "uninvite", "lawyer-li"),
    ]
    details = {(e["action"], e["actor"]): e["details"] for e in reversed(log)}  # the newest of each
    assert details["role", "system"] == {"from": "annotator", "to": "admin", "reason": "invitation"}
    assert details["invite", "realadmin"] == {"role": "admin", "previous_role": "annotator"}
    assert details["import", "realadmin"]["count"] == 2 and details["import", "realadmin"]["source"]
    assert details["export", "realadmin"]["format"] == "csv"
    assert details["uninvite", "realadmin"] == {"role": "admin", "released": 60}  # reserved as annotator
    assert all(isinstance(e["at"], float) for e in log) and log[0]["id"] > log[-1]["id"]  # newest first


def test_the_audit_log_refuses_update_and_delete(tmp_path):
    path = tmp_path / STORE_FILE
    with AnnotationStore(path) as store:
        store.invite("lawyer-li", by="root")
    con = sqlite3.connect(path)
    try:
        for statement in ("UPDATE audit_log SET actor = 'nobody'", "DELETE FROM audit_log"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                con.execute(statement)
        assert con.execute("SELECT actor FROM audit_log").fetchall() == [("root",)]
    finally:
        con.close()
    assert not [
        name for name in dir(AnnotationStore) if "audit" in name and name not in ("_audit", "audit_log")
    ]


# -- 4. the secret swap draws ---------------------------------------------------------------------


def swaps(path, seed=None) -> dict[str, int]:
    with AnnotationStore(path) as store:
        store.import_items(items(60))
        store.add_annotator("alice")
        store.assign(overlap=1, seed=seed)
        return {r[0]: r[1] for r in store._all("SELECT item_id, swapped FROM assignments")}


def test_two_stores_without_a_seed_draw_different_swaps_and_a_seed_reproduces(tmp_path):
    one, two = swaps(tmp_path / "one.sqlite"), swaps(tmp_path / "two.sqlite")
    assert one != two  # 60 draws alike by chance: 2^-60
    assert swaps(tmp_path / "a.sqlite", seed=0) == swaps(tmp_path / "b.sqlite", seed=0)
    assert swaps(tmp_path / "c.sqlite", seed=0) != one
    with AnnotationStore(tmp_path / "one.sqlite") as store:
        secret = store.draw_secret()
    with AnnotationStore(tmp_path / "one.sqlite") as store:
        assert store.draw_secret() == secret and len(secret) == 64  # made once, kept
    assert Settings().annotation_seed is None


def test_an_old_store_keeps_its_draws_and_gets_a_secret(tmp_path):
    path = tmp_path / STORE_FILE
    with AnnotationStore(path, migrations=MIGRATIONS[:2]) as store:  # a store written before migration 3
        store.import_items(items(3))
    con = sqlite3.connect(path)
    with con:
        con.execute("INSERT INTO annotators VALUES ('张', 'annotator', 1.0)")
        con.executemany(
            "INSERT INTO assignments VALUES ('张', ?, ?, ?, 'todo', 1.0, 1.0)",
            [("q0", 11, 1), ("q1", 22, 0), ("q2", 33, 1)],
        )
    con.close()
    with AnnotationStore(path) as store:
        assert store.schema_version() == len(MIGRATIONS) == 4
        kept = store._all("SELECT item_id, position, swapped, seen_at FROM assignments ORDER BY item_id")
        assert [tuple(r) for r in kept] == [("q0", 11, 1, None), ("q1", 22, 0, None), ("q2", 33, 1, None)]
        assert len(store.draw_secret()) == 64 and store.audit_log() == []
        assert store.annotators()[0]["joined_via"] == ""
        assert store.next_item("张").item.id in ("q0", "q1", "q2")


def test_the_new_settings_load_from_the_environment_and_are_checked(tmp_path):
    env = {"LAWLUO_ANNOTATION_ORGS": "lawfirm,bar", "LAWLUO_ANNOTATION_RESERVE_IDLE_S": "3600"}
    settings = load_settings(environ=env)
    assert settings.annotation_orgs == "lawfirm,bar" and settings.annotation_reserve_idle_s == 3600
    assert (
        settings.annotation_seed is None
        and load_settings(environ={"LAWLUO_ANNOTATION_SEED": "7"}).annotation_seed == 7
    )
    assert Settings().annotation_reserve_idle_s == WEEK
    with pytest.raises(ValueError, match="annotation_reserve_idle_s"):
        Settings(annotation_reserve_idle_s=-1)


# -- the command line -----------------------------------------------------------------------------


def test_invite_uninvite_invites_and_audit_from_the_command_line(capsys, store_dir):
    assert run(capsys, "invite", "lawyer-li")[1] == [{"invited": "lawyer-li", "role": "annotator"}]
    assert run(capsys, "invite", "prof-wang", "--role", "admin")[1] == [
        {"invited": "prof-wang", "role": "admin"}
    ]
    code, rows, _ = run(capsys, "invites")
    assert code == 0 and [(r["name"], r["role"]) for r in rows] == [
        ("lawyer-li", "annotator"),
        ("prof-wang", "admin"),
    ]
    assert rows[0]["invited_by"].startswith("cli") and rows[0]["invited_at"].endswith("+00:00")
    assert run(capsys, "uninvite", "lawyer-li")[1] == [{"uninvited": "lawyer-li", "released": 0}]
    code, rows, _ = run(capsys, "audit", "--limit", "2")
    assert code == 0 and [(r["action"], r["subject"]) for r in rows] == [
        ("uninvite", "lawyer-li"),
        ("invite", "prof-wang"),
    ]
    assert rows[0]["actor"].startswith("cli") and rows[0]["at"].endswith("+00:00")
    code, _, err = run(capsys, "uninvite", "nobody")
    assert code == 2 and "no invitation" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "name",
    ["<img src=x onerror=alert(1)>", "x" * 10_000, "bad\x00name", "right\u202eleft", "two words", ""],
    ids=["html", "long", "nul", "bidi", "space", "empty"],
)
def test_a_hostile_name_is_refused_in_a_short_message(capsys, store_dir, name):
    code, rows, err = run(capsys, "invite", name)
    assert code == 2 and rows == [] and "Traceback" not in err and len(err) < 400
    assert "\x00" not in err and "\u202e" not in err
    with AnnotationStore(store_dir / STORE_FILE) as store:
        assert store.invitations() == [] and store.audit_log() == []


# -- the admin's form (the Adjudication tab) ------------------------------------------------------

ROOT, BOB = SimpleNamespace(username="root"), SimpleNamespace(username="bob")


@pytest.fixture
def admin_service(tmp_path):
    store = AnnotationStore(tmp_path / STORE_FILE)
    service = AnnotationService(store, users=parse_users("root:r:admin,bob:b"))
    for name in ("root", "bob"):
        service.identify(name)
    return service


def test_the_admin_invites_withdraws_and_reads_the_log_in_the_tab(admin_service):
    out = adjudicate_tab.invite_account(admin_service, "lawyer-li", "admin", ROOT)
    assert "Invited 'lawyer-li' as admin" in html.unescape(out.message)
    assert out.invitations == [["lawyer-li", "admin", "root", out.invitations[0][3]]]
    assert out.audit[0][1:4] == ["root", "invite", "lawyer-li"] and out.audit[0][0].endswith("+00:00")
    out = adjudicate_tab.uninvite_account(admin_service, "lawyer-li", ROOT)
    assert "Invitation withdrawn" in out.message and out.invitations == [] and out.audit[0][2] == "uninvite"
    out = adjudicate_tab.uninvite_account(admin_service, "lawyer-li", ROOT)
    assert "There is no invitation for “'lawyer-li'”" in html.unescape(out.message)
    out = adjudicate_tab.access_tables(admin_service, ROOT)
    assert out.message == "" and [row[2] for row in out.audit] == ["uninvite", "invite", "signup", "signup"]


def test_only_an_admin_may_use_the_form(admin_service):
    for out in (
        adjudicate_tab.invite_account(admin_service, "bob-friend", "annotator", BOB),
        adjudicate_tab.uninvite_account(admin_service, "root", BOB),
        adjudicate_tab.access_tables(admin_service, BOB),
    ):
        assert "Only an admin" in out.message and out.invitations == [] and out.audit == []
    assert admin_service.store.invitations() == []


@pytest.mark.parametrize(
    "name",
    ['<img src=x onerror="alert(1)">', "<script>alert(1)</script>", "x" * 100_000, "a\x00b\x1b[31m", None],
    ids=["img", "script", "long", "control", "none"],
)
def test_hostile_names_in_the_form_are_refused_plainly(admin_service, name):
    out = adjudicate_tab.invite_account(admin_service, name, "annotator", ROOT)
    message, invitations, audit = out.message, out.invitations, out.audit
    assert "Not invited" in message and len(message) < 600 and "Traceback" not in message
    assert (
        "<img" not in message and "<script" not in message and "\x00" not in message and "\x1b" not in message
    )
    assert invitations == [] and [row[2] for row in audit] == ["signup", "signup"]


def test_a_hostile_profile_name_is_shown_as_text_on_one_line(tmp_path, on_a_space):
    service = space_service(tmp_path)
    hostile = "<img src=x onerror=alert(1)>\n" + "长" * 500
    message = tab_view(annotate_tab.open_annotation(service, None, profile(hostile)))["message"]
    assert "您尚未受邀参加标注" in message and "<img" not in message and "&lt;img" in message
    assert len(message) < 700 and service.store.annotators() == []


def test_the_audit_table_cells_are_one_line_of_plain_text():
    assert adjudicate_tab.cell("a\nb\x00c\u202ed" + "e" * 400) == "a b c d" + "e" * 293 + "…"


def test_a_top_up_the_disk_refuses_leaves_the_annotator_with_a_plain_message(tmp_path, monkeypatch):
    store = AnnotationStore(tmp_path / STORE_FILE)
    service = AnnotationService(store, users=parse_users("alice:a"))
    service.identify("alice")
    store.import_items(items(2))  # not assigned yet: opening the tab tops up, and the disk refuses

    def refused(*args, **kwargs):
        raise StoreWriteError("没有保存 NOT saved: the disk is full")

    monkeypatch.setattr(store, "assign", refused)
    opened = tab_view(annotate_tab.open_annotation(service, SimpleNamespace(username="alice")))
    assert "No items are assigned to you yet" in opened["message"] and opened["state"] == {}
