"""May a clarifier model's element be shown to the client? Repair what can be repaired, name what cannot.

An element of the Tree of Legal Clarifications is one fact about the *client's* situation that the client
can answer yes or no (LawLuo paper §3.2). Small local models (issue 41: Qwen2.5 0.5B/1.5B) get the form
right and the content wrong in a few recurring ways, each seen in their trees:

- they copy the **parties of the retrieved cases** (梅某某, 汤xx, 二被告) or the **court's words** (原告, 本院,
  原审) — the client is none of them;
- they ask the **legal conclusion back** (房子是否应该全归我哥？, 我是否能要求赔偿？) — that is the lawyer's
  answer, not a fact the client knows;
- they ask **a choice or an open question** (出资在婚前还是婚后？, 欠款是多少？) or **several facts at once**,
  which a 是/否 cannot answer;
- they append the **citation** the material's description carries (…？（《劳动合同法》第八十二条）), which
  also hid duplicates from :func:`~.tree.statement_key`.

:func:`vet` repairs the last (the citation is cut, a missing ？ added, spaces folded) and rejects the others
with a code of :data:`REJECTIONS`; the builder then tops the node up from the material or the cases, each
such element labelled ``rejected`` (:data:`~.tree.FALLBACK_REASONS`). The rules read the statement only:
they never need the model to be right about itself.
"""

from __future__ import annotations

import re

from ..text import ideographs
from .tree import _CITED, statement_key

#: A code per reason an element is not shown: (Chinese, English) for the trace and the tests.
REJECTIONS = {
    "party": ("含案例当事人的称呼", "names a party of a case"),
    "court": ("含法院或诉讼用语", "uses the court's or a litigant's words"),
    "conclusion": ("把法律结论反问给当事人", "asks the legal conclusion back"),
    "choice": ("不是可以用“是/否”回答的问题", "not a yes/no question"),
    "several": ("一次问了多件事", "asks several things at once"),
    "too_short": ("内容过短", "too short"),
    "question": ("重复了当事人的问题", "repeats the client's question"),
    "meta": ("问的是咨询本身而不是案情", "asks about the conversation, not the case"),
}
MIN_CJK = 4
MAX_CHARS = 60

#: A citation appended or prefixed: （《劳动合同法》第八十二条）, 根据《民法典》第1079条，.
_CITATION = re.compile(
    _CITED.pattern + r"|^(?:依据|根据|按照)\s*《[^》]{1,40}》\s*(?:第[^条]{1,10}条)?(?:的规定)?\s*[，,：:]?"
)
#: A party of a case by its anonymised name: 梅某某, 张某, 汤xx, 王×.
_PARTY = re.compile(
    r"某某|[\u4e00-\u9fff]某(?=[，,。？?的在与和向对是未已被将把给从]|$)|[\u4e00-\u9fff]?[xX×]{1,3}(?=[\u4e00-\u9fff])|"
    r"[二三四两]被告|甲方乙方|甲某|乙某"
)
_COURT = re.compile(r"被告人?|原告|上诉人|申请人|本院|原审|一审|二审|公诉|被害人|案外人|辩护人|法院认为")
#: The lawyer's conclusion asked back: 是否应该全归我哥, 我是否能要求赔偿, 能否获得赔偿, 是否构成犯罪.
_CONCLUSION = re.compile(
    r"(?:是否\s*(?:应该|应当|可以|能够?|有权|需要|必须)|能否|可否|能不能|可不可以|该不该|应不应该|有没有权)\s*"
    r"(?:要求|主张|获得|得到|拿到|追回|判|归|分得?|赔|起诉|解除|撤销|追究|构成|承担|认定|胜诉|退还|返还)"
    r"|是否(?:应该|应当)\S{0,6}归|是否(?:构成|合法|违法|有效|无效)|怎么办|如何处理|怎样处理|怎么处理"
)
_CHOICE = re.compile(r"还是")
#: About the conversation, not the case: 您是否还有其他需要确认的事项？ (a 0.5B model's filler).
_META = re.compile(r"其他需要|还有其他|需要确认的事项|需要补充|还有什么|其他问题|想咨询|想了解")
#: The client's own question, in the client's voice: 公司三个月没发工资，我能走吗？
_CLIENT_VOICE = re.compile(r"我(?:能|可以|该|应该|要|想)[^，。？?]{0,12}吗[？?]?$")
_OPEN = re.compile(r"哪些|哪个|哪里|什么|多少|几[个年月天次]|何时|谁|为何|为什么|怎么|如何")
_YES_NO = re.compile(r"是否|有没有|是不是|吗[？?]?$|否[？?]?$")
_SEVERAL = re.compile(r"[？?].+[？?]|；|;")


def repaired(statement: str) -> str:
    """The statement with a citation cut, spaces folded and a ？ at its end.

    >>> repaired("公司是否未与您签订书面劳动合同？（《劳动合同法》第八十二条）")
    '公司是否未与您签订书面劳动合同？'
    >>> repaired("根据《民法典》第1079条，您与配偶是否分居满两年")
    '您与配偶是否分居满两年？'
    """
    text = _CITATION.sub("", " ".join(statement.replace("**", "").replace("__", "").split())).strip(" ，,：:")
    # the client's voice: 我是否… → 您是否…
    text = re.sub(r"^我(?=是否|有没有|已|曾|在|与|和|的)", "您", text)
    if text and text[-1] not in "？?":
        text = text.rstrip("。.！!") + "？"
    return text


def rejection(statement: str, question: str = "") -> str | None:
    """Why the (repaired) statement may not be shown, a key of :data:`REJECTIONS`; ``None`` when it may.

    >>> [rejection(s) for s in ("梅某某是否已支付工程款？", "房子是否应该全归我哥？", "出资在婚前还是婚后？",
    ...                          "是否已向本院提交证据？", "公司是否未与您签订书面劳动合同？")]
    ['party', 'conclusion', 'choice', 'court', None]
    """
    if ideographs(statement) < MIN_CJK:
        return "too_short"
    if question and statement_key(statement) in (statement_key(question), statement_key(repaired(question))):
        return "question"
    if _META.search(statement):
        return "meta"
    if _CLIENT_VOICE.search(statement):
        return "conclusion"  # the client asking the lawyer, not a fact the client can confirm
    if _PARTY.search(statement):
        return "party"
    if _COURT.search(statement):
        return "court"
    if _CONCLUSION.search(statement):
        return "conclusion"
    if _SEVERAL.search(statement.rstrip("？?")):
        return "several"
    if _CHOICE.search(statement) or (_OPEN.search(statement) and not _YES_NO.search(statement)):
        return "choice"  # 还是…; 欠款是多少 (but 是否有证人能证明谁先动手 is a yes/no question)
    return None


def vet(statement: str, question: str = "") -> tuple[str, str | None]:
    """(the statement as it would be shown, why it may not be — ``None`` when it may).

    >>> vet("您是否已满十八周岁（《民法典》第十七条）")
    ('您是否已满十八周岁？', None)
    """
    text = repaired(statement)[:MAX_CHARS]
    return text, rejection(text, question)
