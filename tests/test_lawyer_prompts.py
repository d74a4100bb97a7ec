"""Each of the 16 domain lawyers has its role-enhancement prompt, and every statute a prompt cites is real.

A role prompt that cited a repealed law or a non-existent article would teach the lawyer to hallucinate
(LegalHalBench §3.3), so every ``《法》第N条`` in a prompt must name a law in force whose current version
has that article, and the checker must not find the prompt's wording contradicting the article.
"""

from __future__ import annotations

import re

import pytest

from lawluo import prompts
from lawluo.domains import DOMAINS

ARTICLE_MENTION = re.compile(r"第[零一二三四五六七八九十百千\d]+条")


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.id)
def test_every_domain_has_its_role_prompt(domain):
    assert domain.prompt == f"lawyer/{domain.id}"
    assert (prompts.PROMPTS_DIR / f"{domain.prompt}.txt").is_file()
    assert prompts.load(domain.prompt).fields == ()
    text = prompts.render(domain.prompt)
    chinese = len(re.findall(r"[\u4e00-\u9fff]", text))
    assert 150 <= chinese <= 400, f"{domain.id}: {chinese} Chinese characters"
    assert "LawLuo" in text and "不构成正式法律意见" in text


@pytest.mark.parametrize("domain", DOMAINS, ids=lambda d: d.id)
def test_every_statute_cited_in_a_role_prompt_exists_and_is_in_force(domain, db, checker):
    text = prompts.render(domain.prompt)
    checked = checker.check(text).citations
    # Every article mention was attributed to a law: none escapes the check below.
    assert len(checked) == len(ARTICLE_MENTION.findall(text)) >= 3
    for c in checked:
        cit, where = c.citation, f"{domain.id}: {c.citation.written} {c.citation.label}"
        assert cit.key is not None and cit.resolution.repeal is None, where
        current = db.current(cit.key)
        assert current.in_force and current.superseded_by is None, where
        assert db.article(current, cit.article, cit.suffix) is not None, where
        assert c.verdict in ("verified", "no_content"), f"{where}: {c.verdict} {c.note}"


def test_a_made_up_article_would_fail_the_check(db, checker):
    (c,) = checker.check("离婚《中华人民共和国民法典》第一千三百条；").citations
    assert db.article(db.current(c.citation.key), c.citation.article) is None
    (c,) = checker.check("违约责任《中华人民共和国合同法》第一百零七条；").citations
    assert c.citation.resolution.repeal is not None
