"""Which of the judicial interpretations and opinions courts cite most are in the statute database.

    python benchmarks/statute_coverage.py                                   # the shipped database
    python benchmarks/statute_coverage.py --upstream /path/to/Laws.git      # and where upstream has them

The list below is of documents that criminal and civil judgments cite often (the SPC/SPP interpretations,
opinions and replies sentencing, theft, drunk driving, private lending, labour disputes, personal injury
and marriage turn on), each with the years of the versions courts cite. For each: whether
:meth:`StatuteDB.resolve` finds it, which of those versions the database holds (by version date year), and,
with ``--upstream`` (a git directory of LawRefBook/Laws, e.g. the one the ``fetch`` of
``github:LawRefBook/Laws`` gives), the files of the newest commit and of its history whose name reduces
to the same key (:func:`name_key`), so that a missing document can be added from there
(``data/laws_supplement/``, ``data/SOURCES.md``).

The names are the documents' official titles; the list is a checklist, not a sample of judgments.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lawluo.law import StatuteDB  # noqa: E402
from lawluo.law.names import name_key  # noqa: E402

#: (area, official title, years of the versions courts cite)
CITED: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("刑事", "最高人民法院关于处理自首和立功具体应用法律若干问题的解释", (1998,)),
    ("刑事", "最高人民法院关于处理自首和立功若干具体问题的意见", (2010,)),
    ("刑事", "最高人民法院关于常见犯罪的量刑指导意见", (2013, 2017)),
    ("刑事", "最高人民法院、最高人民检察院关于常见犯罪的量刑指导意见（试行）", (2021,)),
    (
        "刑事",
        "最高人民法院、最高人民检察院、公安部关于办理醉酒驾驶机动车刑事案件适用法律若干问题的意见",
        (2013,),
    ),
    ("刑事", "最高人民法院、最高人民检察院、公安部、司法部关于办理醉酒危险驾驶刑事案件的意见", (2023,)),
    ("刑事", "最高人民法院关于适用刑法第六十四条有关问题的批复", (2013,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理盗窃刑事案件适用法律若干问题的解释", (2013,)),
    ("刑事", "最高人民法院关于审理交通肇事刑事案件具体应用法律若干问题的解释", (2000,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理诈骗刑事案件具体应用法律若干问题的解释", (2011,)),
    (
        "刑事",
        "最高人民法院、最高人民检察院、公安部关于办理电信网络诈骗等刑事案件适用法律若干问题的意见",
        (2016,),
    ),
    (
        "刑事",
        "最高人民法院、最高人民检察院关于办理非法利用信息网络、帮助信息网络犯罪活动等刑事案件适用法律若干问题的解释",
        (2019,),
    ),
    ("刑事", "最高人民法院关于审理毒品犯罪案件适用法律若干问题的解释", (2016,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理贪污贿赂刑事案件适用法律若干问题的解释", (2016,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理寻衅滋事刑事案件适用法律若干问题的解释", (2013,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理敲诈勒索刑事案件适用法律若干问题的解释", (2013,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理抢夺刑事案件适用法律若干问题的解释", (2013,)),
    ("刑事", "最高人民法院关于审理抢劫案件具体应用法律若干问题的解释", (2000,)),
    ("刑事", "最高人民法院关于审理抢劫、抢夺刑事案件适用法律若干问题的意见", (2005,)),
    ("刑事", "最高人民法院关于审理抢劫刑事案件适用法律若干问题的指导意见", (2016,)),
    (
        "刑事",
        "最高人民法院、最高人民检察院、公安部、国家安全部、司法部关于适用认罪认罚从宽制度的指导意见",
        (2019,),
    ),
    ("刑事", "最高人民法院关于审理拒不执行判决、裁定刑事案件适用法律若干问题的解释", (2015,)),
    (
        "刑事",
        "最高人民法院关于审理掩饰、隐瞒犯罪所得、犯罪所得收益刑事案件适用法律若干问题的解释",
        (2015, 2021),
    ),
    (
        "刑事",
        "最高人民法院、最高人民检察院关于办理妨害信用卡管理刑事案件具体应用法律若干问题的解释",
        (2009, 2018),
    ),
    ("刑事", "最高人民法院、最高人民检察院关于办理侵犯公民个人信息刑事案件适用法律若干问题的解释", (2017,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理危害生产安全刑事案件适用法律若干问题的解释", (2015,)),
    ("刑事", "最高人民法院、最高人民检察院关于办理赌博刑事案件具体应用法律若干问题的解释", (2005,)),
    ("刑事", "最高人民法院关于办理减刑、假释案件具体应用法律的规定", (2016,)),
    ("刑事", "最高人民法院关于刑事裁判涉财产部分执行的若干规定", (2014,)),
    ("刑事", "最高人民法院关于审理未成年人刑事案件具体应用法律若干问题的解释", (2006,)),
    ("刑事", "最高人民法院、最高人民检察院、公安部、司法部关于办理恶势力刑事案件若干问题的意见", (2019,)),
    ("刑事", "最高人民法院、最高人民检察院、公安部关于办理非法集资刑事案件若干问题的意见", (2019,)),
    ("刑事", "最高人民法院关于适用《中华人民共和国刑事诉讼法》的解释", (2012, 2021)),
    ("民事", "最高人民法院关于审理民间借贷案件适用法律若干问题的规定", (2015, 2020)),
    ("民事", "最高人民法院关于审理劳动争议案件适用法律问题的解释（一）", (2020,)),
    ("民事", "最高人民法院关于审理劳动争议案件适用法律问题的解释（二）", (2025,)),
    ("民事", "最高人民法院关于审理劳动争议案件适用法律若干问题的解释（四）", (2013,)),
    ("民事", "最高人民法院关于审理人身损害赔偿案件适用法律若干问题的解释", (2003, 2020, 2022)),
    ("民事", "最高人民法院关于确定民事侵权精神损害赔偿责任若干问题的解释", (2001, 2020)),
    ("民事", "最高人民法院关于审理道路交通事故损害赔偿案件适用法律若干问题的解释", (2012, 2020)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》婚姻家庭编的解释（一）", (2020,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》婚姻家庭编的解释（二）", (2025,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》继承编的解释（一）", (2020,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》物权编的解释（一）", (2020,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》总则编若干问题的解释", (2022,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》合同编通则若干问题的解释", (2023,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》有关担保制度的解释", (2020,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》侵权责任编的解释（一）", (2024,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民法典》时间效力的若干规定", (2020,)),
    ("民事", "最高人民法院关于适用《中华人民共和国民事诉讼法》的解释", (2015, 2020, 2022)),
    ("民事", "最高人民法院关于民事诉讼证据的若干规定", (2001, 2019)),
    ("民事", "最高人民法院关于审理买卖合同纠纷案件适用法律问题的解释", (2012, 2020)),
    ("民事", "最高人民法院关于审理建设工程施工合同纠纷案件适用法律问题的解释（一）", (2020,)),
    ("民事", "最高人民法院关于审理商品房买卖合同纠纷案件适用法律若干问题的解释", (2003, 2020)),
    ("民事", "最高人民法院关于审理城镇房屋租赁合同纠纷案件具体应用法律若干问题的解释", (2009, 2020)),
    ("民事", "最高人民法院关于审理物业服务纠纷案件适用法律若干问题的解释", (2009, 2020)),
    ("民事", "最高人民法院关于审理民事案件适用诉讼时效制度若干问题的规定", (2008, 2020)),
    ("民事", "最高人民法院关于审理涉及夫妻债务纠纷案件适用法律有关问题的解释", (2018,)),
    ("民事", "最高人民法院关于审理医疗损害责任纠纷案件适用法律若干问题的解释", (2017, 2020)),
    ("民事", "最高人民法院关于审理工伤保险行政案件若干问题的规定", (2014,)),
    ("民事", "最高人民法院关于审理银行卡民事纠纷案件若干问题的规定", (2021,)),
    ("民事", "最高人民法院关于审理利用信息网络侵害人身权益民事纠纷案件适用法律若干问题的规定", (2014, 2020)),
    ("民事", "最高人民法院关于人民法院民事执行中查封、扣押、冻结财产的规定", (2004, 2020)),
    ("民事", "最高人民法院关于民事执行中变更、追加当事人若干问题的规定", (2016, 2020)),
    ("民事", "最高人民法院关于人民法院办理执行异议和复议案件若干问题的规定", (2015, 2020)),
    ("民事", "最高人民法院关于适用《中华人民共和国婚姻法》若干问题的解释（二）", (2003,)),
    ("民事", "最高人民法院关于适用《中华人民共和国合同法》若干问题的解释（二）", (2009,)),
    ("民事", "最高人民法院关于贯彻执行《中华人民共和国民法通则》若干问题的意见（试行）", (1988,)),
    ("民事", "最高人民法院关于人民法院审理离婚案件如何认定夫妻感情确已破裂的若干具体意见", (1989,)),
    ("民事", "最高人民法院关于人民法院审理离婚案件处理财产分割问题的若干具体意见", (1993,)),
    ("民事", "全国法院民商事审判工作会议纪要", (2019,)),
)


def upstream_names(git_dir: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """name key → paths of the Markdown files at HEAD, and → ``commit:path`` of files in the history."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "core.quotepath=off", "--git-dir", str(git_dir), *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    head: dict[str, list[str]] = {}
    for path in git("ls-tree", "-r", "HEAD", "--name-only").splitlines():
        if path.endswith(".md") and not path.startswith("DLC/"):
            head.setdefault(_file_key(path), []).append(path)
    history: dict[str, list[str]] = {}
    commit = ""
    for line in git("log", "--all", "--name-only", "--format=@%h", "--diff-filter=AMD").splitlines():
        if line.startswith("@"):
            commit = line[1:]
        elif line.endswith(".md"):
            history.setdefault(_file_key(line), []).append(f"{commit}:{line}")
    return head, history


def _file_key(path: str) -> str:
    """The name key of an upstream file: its name without the version date LawRefBook appends."""
    return name_key(re.sub(r"\(\d{4}-\d{2}-\d{2}\)$", "", Path(path).stem))


def coverage(db: StatuteDB, upstream: Path | None = None) -> list[dict]:
    head, history = upstream_names(upstream) if upstream else ({}, {})
    rows = []
    for area, title, years in CITED:
        res = db.resolve(title)
        key = name_key(title)
        versions = db.versions(res.key) if res.key else []
        # a version counts for the year of its date and of its taking effect (民诉法解释 2014-12-18: 2015)
        held = sorted({int(d[:4]) for v in versions for d in (v.version, v.valid_from) if d})
        rows.append(
            {
                "area": area,
                "title": title,
                "years": years,
                "in_db": res.key is not None,
                "repealed": res.repeal is not None,
                "db_years": held,
                "missing_years": [y for y in years if y not in held],
                "upstream_head": head.get(key, []),
                "upstream_history": sorted(set(history.get(key, []))),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path, help="statute database (default: the settings' statutes.sqlite)")
    parser.add_argument(
        "--upstream", type=Path, help="git directory of LawRefBook/Laws to look for the absent"
    )
    args = parser.parse_args(argv)
    from lawluo.config import load_settings

    db = StatuteDB(args.db or load_settings().statutes_path)
    rows = coverage(db, args.upstream)
    print("| area | document | cited versions | in the database | versions missing | upstream |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        where = "; ".join(r["upstream_head"][:2]) or ("history: " + "; ".join(r["upstream_history"][:2]))
        where = where if (r["upstream_head"] or r["upstream_history"]) else ("—" if args.upstream else "")
        held = ", ".join(map(str, r["db_years"])) or ("repealed record only" if r["repealed"] else "absent")
        print(
            f"| {r['area']} | {r['title']} | {', '.join(map(str, r['years']))} | {held} | "
            f"{', '.join(map(str, r['missing_years'])) or '—'} | {where} |"
        )
    absent = [r for r in rows if not r["in_db"]]
    partial = [r for r in rows if r["in_db"] and r["missing_years"]]
    print(
        f"\n{len(rows)} documents: {len(rows) - len(absent)} in the database "
        f"({len(partial)} of them lack a cited version), {len(absent)} absent."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
