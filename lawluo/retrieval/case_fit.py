"""Whether a case is of the kind a question is about: the question's cause of action, and the fit rule.

    question_cause("朋友借了我五万块钱一直不还", "debt")    # '民间借贷纠纷'
    cause_fits("民间借贷纠纷", "借款合同纠纷")              # True: both under 借款合同
    cause_fits("诈骗", "民间借贷纠纷")                      # False

A similar case is shown only when its cause fits the question's (issue 39 item 5): a loan question is
not like a theft, nor like a lease. :func:`cause_fits` is the rule the benchmarks score with
(``benchmarks/retrieval_fresh.py``, ``benchmarks/case_relevance.py``) and the case search filters with
(:meth:`lawluo.retrieval.cases.CaseSearcher.similar`), so the two cannot drift apart.

:func:`question_cause` reads the cause (案由, or the charge, or the kind of administrative act) off a lay
question: a civil cause it writes out (``…属于民间借贷纠纷吗``), else a charge it names (职务侵占), else keyword
rules written by hand from legal domain knowledge (data below, first match wins, specific before general). A
question that speaks of a crime (:data:`CRIME_CONTEXT`) or is routed to the criminal domain tries the charges
first; any other tries the civil and administrative causes first. When no rule matches, a domain whose cases
are nearly all of one family gives that family (:data:`DOMAIN_DEFAULTS`); otherwise the cause is unknown
(``""``) and no case is shown. Keyword rules miss what they do not name, and a wrong cause shows cases of the
wrong kind: ``benchmarks/case_relevance.py`` measures both. The rules were written and corrected on the dev
questions of ``benchmarks/data/case_questions.dev*.jsonl``, real questions of ``../shared/data`` (LawBench,
lawyer_llama) read without labels, and the case bank's own facts; never on the frozen fresh set.
"""

from __future__ import annotations

import re

#: What the lawyer's extract (no model) says when no case of the question's kind is in the case bank: part
#: of its Chinese answer (the pages say it in their own language: ``statute.cases_none_fit``).
NONE_FITS = "案例库中没有与此问题同类的案例。"

#: Causes of action that group narrower ones (the parent's cases fit a child's question and the reverse).
#: The first three rows are ``benchmarks/retrieval_fresh.py``'s; 婚姻家庭 was added with this module, from
#: the 民事案件案由规定 (婚姻家庭纠纷 is the heading over 离婚, 离婚后财产, 婚内夫妻财产分割, 夫妻财产约定 …),
#: for its divorce and marital-property causes only: a case filed as 婚姻家庭纠纷 over dividing a couple's
#: property fits a divorce question, an adoption case does not.
CAUSE_PARENTS = {
    "劳动争议": ("劳动合同", "追索劳动报酬", "工伤保险待遇", "劳动"),
    "机动车交通事故": ("交通事故", "交通肇事"),
    "借款合同": ("民间借贷", "金融借款合同"),
    "婚姻家庭": ("离婚", "夫妻", "婚内", "婚后"),
}


def _bare(cause: str) -> str:
    for word in ("罪", "纠纷", "责任"):
        cause = cause.replace(word, "")
    return cause.strip()


def cause_fits(cause: str, label: str) -> bool:
    """Whether a case of ``cause`` fits a question labelled ``label``.

    With 罪/纠纷/责任 stripped, the two are equal or one contains the other (a case of several charges,
    ``盗窃；抢夺``, fits each of them), or both fall under one of the parents in :data:`CAUSE_PARENTS`
    (劳动争议 covers 劳动合同, 追索劳动报酬, 工伤保险待遇 …). An empty cause fits nothing.

    >>> cause_fits("盗窃", "盗窃罪"), cause_fits("劳动争议", "追索劳动报酬纠纷"), cause_fits("诈骗", "盗窃罪")
    (True, True, False)
    >>> cause_fits("民间借贷纠纷", "借款合同纠纷"), cause_fits("房屋租赁合同纠纷", "民间借贷纠纷"), cause_fits("", "盗窃")
    (True, False, False)
    """
    a, b = _bare(cause), _bare(label)
    if not a or not b:
        return False
    if a == b or a in b or b in a:
        return True
    for parent, children in CAUSE_PARENTS.items():
        family = (parent, *children)
        if any(x in a for x in family) and any(x in b for x in family):
            return True
    return False


#: Words that put a question in criminal territory: punishment, the police, the courts and the parties of a
#: crime (被告人, 被害人: a judgment's facts, what a client pastes).
#: 得罪 (to offend) is not a crime; 受罪 is not either.
CRIME_CONTEXT = re.compile(
    r"判刑|判几年|判多久|坐牢|犯罪|犯法|刑拘|拘留|刑事|逮捕|批捕|取保候审|看守所|公诉|立案|派出所|警察|"
    r"公安|报警|报案|自首|被抓|抓了|抓走|抓起来|被查|缓刑|被告人|犯罪嫌疑人|检察院|被害人|关多久|关几年|案底|前科|"
    r"服刑|监狱|拘役|有期徒刑|(?<![得受])罪"
)

#: Charges (罪名) by the words a lay person uses for them; tried first in a criminal context.
CHARGE_RULES: tuple[tuple[str, str], ...] = (
    (r"肇事|逃逸|(?:开车|驾车|驾驶)[^。？]{0,12}撞|撞(?:死|成|伤|了人)", "交通肇事罪"),
    (
        r"醉驾|酒驾|醉酒驾驶|酒后[^。？]{0,40}(?:驾驶|开车|驾车)|喝(?:了)?[^，。？]{0,8}酒[^，。？]{0,8}开车|"
        r"乙醇含量|飙车|追逐竞驶",
        "危险驾驶罪",
    ),
    (r"罂粟|大麻[^，。？]{0,4}(?:种|植)", "非法种植毒品原植物罪"),
    (r"容留[^。？]{0,20}(?:吸毒|吸食)", "容留他人吸毒罪"),  # taking drugs (吸毒) is no crime
    (r"贩毒|卖毒|运毒|贩卖毒品", "贩卖毒品罪"),
    (r"毒品", "非法持有毒品罪"),
    (r"卖淫", "引诱、容留、介绍卖淫罪"),
    (r"淫秽", "传播淫秽物品罪"),
    (r"拐卖|贩卖(?:儿童|妇女|人口)", "拐卖妇女、儿童罪"),
    (r"强奸", "强奸罪"),
    (r"猥亵", "猥亵罪"),
    (r"绑架", "绑架罪"),
    (r"敲诈|勒索", "敲诈勒索罪"),
    (r"抢夺|飞车抢|夺(?:走|了)", "抢夺罪"),
    (r"抢劫|抢(?:钱|了|走)|持刀抢", "抢劫罪"),
    (r"非法拘禁|关起来|关了[^，。？]{0,4}天|限制[^，。？]{0,4}人身自由", "非法拘禁罪"),
    (r"寻衅滋事", "寻衅滋事罪"),
    (r"聚众斗殴|群殴|打群架", "聚众斗殴罪"),
    (r"杀人|杀了|杀死", "故意杀人罪"),
    (r"过失致人死亡", "过失致人死亡罪"),
    (r"妨害公务|袭警|打(?:了)?警察", "妨害公务罪"),
    (r"放火|纵火", "放火罪"),
    (r"失火", "失火罪"),
    (r"信用卡[^。？]{0,12}(?:透支|套现|不还|逾期)", "信用卡诈骗罪"),
    (r"合同诈骗", "合同诈骗罪"),
    (r"非法集资|集资|吸收[^，。？]{0,6}存款", "非法吸收公众存款罪"),
    (r"冒充[^，。？]{0,6}(?:警察|民警|军人|军官|干部|记者)", "招摇撞骗罪"),
    (r"骗取贷款|骗贷", "骗取贷款罪"),
    (r"传销", "组织、领导传销活动罪"),
    (r"诈骗|骗子|被骗|欺骗|骗(?:了|走|取)|骗[^，。？]{0,8}钱|刷单|杀猪盘", "诈骗罪"),
    (
        r"职务侵占|侵占(?:公司|单位)|(?:公司|单位|厂里)的(?:钱|货|财物|款)[^。？]{0,12}(?:转|拿|占|揣|留)",
        "职务侵占罪",
    ),
    (r"挪用公款", "挪用公款罪"),
    (r"挪用", "挪用资金罪"),
    (r"贪污", "贪污罪"),
    (r"受贿|收(?:了)?[^，。？]{0,4}(?:红包|回扣|好处费)", "受贿罪"),
    (r"行贿|送(?:了)?[^，。？]{0,6}(?:红包|好处费)", "行贿罪"),
    (r"开(?:设)?赌场|设赌|赌档", "开设赌场罪"),
    (r"赌博|赌钱|打牌[^，。？]{0,4}(?:钱|赌)|赌", "赌博罪"),
    (r"假冒[^，。？]{0,6}(?:商标|名牌|品牌|牌子)|卖假货|售假|高仿|假名牌", "销售假冒注册商标的商品罪"),
    (r"假药", "生产、销售假药罪"),
    (r"地沟油|有毒[^，。？]{0,4}食品|有害食品", "生产、销售有毒、有害食品罪"),
    (r"伪劣|假冒伪劣", "生产、销售伪劣产品罪"),
    (r"食品安全|不符合[^，。？]{0,4}安全标准", "生产、销售不符合安全标准的食品罪"),
    (r"电鱼|炸鱼|毒鱼|非法捕捞|禁渔", "非法捕捞水产品罪"),
    (r"开垦[^，。？]{0,4}林地|毁林|占用[^，。？]{0,4}(?:农用地|耕地|林地)", "非法占用农用地罪"),
    (r"伪造[^，。？]{0,8}(?:证件|公章|印章|公文|证明)|假证", "伪造、变造、买卖国家机关公文、证件、印章罪"),
    (r"拒不支付劳动报酬|恶意欠薪", "拒不支付劳动报酬罪"),
    (r"拒不执行|老赖", "拒不执行判决、裁定罪"),
    (r"重婚", "重婚罪"),
    (r"遗弃", "遗弃罪"),
    (r"虐待", "虐待罪"),
    (r"非法行医|无证行医|黑诊所", "非法行医罪"),
    (r"枪", "非法持有、私藏枪支、弹药罪"),
    (r"砍(?:了|伐)?[^，。？]{0,4}树|伐木|盗伐|滥伐", "滥伐林木罪"),
    (
        r"银行卡[^，。？]{0,8}(?:借给|卖给|租给|出租|出售)|(?:出租|出售|出借)[^，。？]{0,4}银行卡|帮信",
        "帮助信息网络犯罪活动罪",
    ),
    (r"个人信息", "侵犯公民个人信息罪"),
    (r"偷税|逃税|漏税", "逃税罪"),
    (r"虚开[^，。？]{0,4}发票", "虚开增值税专用发票罪"),
    (r"砸(?:坏|烂|了)|毁坏|故意损坏|划(?:了|坏|花|伤)", "故意毁坏财物罪"),
    (r"私闯民宅|闯入[^，。？]{0,4}(?:家|住宅|民宅)|入民宅|非法侵入", "非法侵入住宅罪"),
    (r"赃物|赃车|明知是[^，。？]{0,8}(?:偷|盗|赃|犯罪所得)", "掩饰、隐瞒犯罪所得、犯罪所得收益罪"),
    (r"偷|盗窃|扒窃|窃取|窃得|入室|顺走|盗", "盗窃罪"),
    (r"打(?:伤|成|断|残|了(?:他|她|人|对方))|轻伤|重伤|轻微伤|伤情鉴定|伤残|动手|打人|打架|捅", "故意伤害罪"),
)

#: Civil causes of action and kinds of administrative act by a lay person's words; first match wins.
CIVIL_RULES: tuple[tuple[str, str], ...] = (
    # money and things that went to the wrong person
    (r"转错|错转|多转|误转|转账[^，。？]{0,6}错", "不当得利纠纷"),
    (r"捡到|拾到|捡了", "遗失物返还纠纷"),
    # family
    (r"彩礼|订婚|退婚", "婚约财产纠纷"),
    (
        r"(?:学校|在校|幼儿园|老师|体育课|课间|上课|教室)[^。？]{0,24}(?:受伤|摔|磕|打伤|推倒|绊倒|拌倒|骨折)",
        "教育机构责任纠纷",
    ),
    (r"离婚|分居|出轨", "离婚纠纷"),
    (r"遗嘱", "遗嘱继承纠纷"),
    (r"遗产|继承", "继承纠纷"),
    (r"收养|领养", "收养关系纠纷"),
    (r"抚养费|抚养权|抚养|不管(?:孩子|儿童|小孩)", "抚养纠纷"),
    (r"探视|探望", "探望权纠纷"),
    (r"赡养|养老人|不(?:肯|愿意?)养|不管[^，。？]{0,4}(?:老人|父母|爸|妈)", "赡养纠纷"),
    (r"同居", "同居关系纠纷"),
    # work
    (r"商业秘密|客户名单|技术秘密|泄密", "侵害商业秘密纠纷"),
    (r"工伤|工亡|(?:用人单位|公司|单位|上班|工作)[^。？]{0,10}(?:伤残|受伤)", "工伤保险待遇纠纷"),
    (
        r"提供劳务|雇(?:了|的)?[^，。？]{0,6}(?:工人|保姆|师傅)|(?:工人|帮工|保姆|师傅)[^。？]{0,16}(?:摔|受伤|伤)",
        "提供劳务者受害责任纠纷",
    ),
    (
        r"欠薪|干活[^。？]{0,12}(?:没|不)(?:有)?给钱|拖欠[^，。？]{0,6}(?:工资|工钱|薪水)|"
        r"(?:工资|工钱|薪水)[^，。？]{0,8}(?:不发|没发|拖|欠|不给|没给)",
        "追索劳动报酬纠纷",
    ),
    (
        r"劳动合同|劳动关系|劳动仲裁|劳动法|辞退|开除|解雇|炒了|试用期|加班|社保|五险一金|经济补偿|双倍工资|"
        r"裁员|离职|辞职|调岗|年假|产假|工资|入职|上班|旷工|不是[^。？]{0,6}员工|(?:公司|工厂|厂里|单位|老板)[^。？]{0,6}罚款|"
        r"(?:没|不)(?:给|跟|帮)我(?:买|交|缴)[^，。？]{0,4}保险",
        "劳动争议",
    ),
    # traffic
    (
        r"车祸|交通事故|追尾|剐蹭|刮(?:了|到|花|蹭)|交强险|撞|碰瓷|(?:开车|驾车|骑车)[^。？]{0,20}(?:摔|倒|伤|骨折)",
        "机动车交通事故责任纠纷",
    ),
    (r"注销[^。？]{0,16}(?:债|欠|钱)|清算", "股东损害公司债权人利益责任纠纷"),
    # debts and credit
    (r"信用卡", "信用卡纠纷"),
    (r"担保人|保证人|作保|担保|连带责任", "保证合同纠纷"),
    (r"网贷|贷款|银行[^，。？]{0,6}借", "金融借款合同纠纷"),
    (
        r"借(?:了|给|我|他|她|钱)|借[^，。？]{0,4}\d+[万千百块元]|借条|借据|借款|欠条|"
        r"欠(?:我|了|你|他)[^，。？]{0,6}(?:钱|万|块|元)|还钱|利息|高利贷",
        "民间借贷纠纷",
    ),
    # houses (a builder paid in flats is still owed a building price)
    (r"工程款|施工队", "建设工程施工合同纠纷"),
    (r"物业", "物业服务合同纠纷"),
    (r"二手房|房屋买卖|买房|卖房|过户", "房屋买卖合同纠纷"),
    (
        r"租(?:房|的房|客|期|金|户|赁)|房东|退租|(?:房|租)[^。？]{0,8}押金|押金[^。？]{0,8}(?:房|租)",
        "房屋租赁合同纠纷",
    ),
    (r"开发商|商品房|期房|新房|交房|烂尾|楼盘", "商品房买卖合同纠纷"),
    (
        r"邻居[^。？]{0,16}(?:墙|漏水|采光|通行|挡|堵|占)|相邻|(?:楼上|上层)[^。？]{0,16}漏水|漏水[^。？]{0,16}楼下",
        "相邻关系纠纷",
    ),
    # injuries and personality rights
    (r"狗|(?<!天)猫|宠物|动物", "饲养动物损害责任纠纷"),
    (r"高空|楼上[^，。？]{0,6}(?:掉|扔|抛|砸)|坠落物|抛物", "不明抛掷物、坠落物损害责任纠纷"),
    (
        r"公开(?:了)?[^，。？]{0,6}(?:电话|号码|住址|身份证)|(?:电话|号码|住址|身份证)[^，。？]{0,4}公开|人肉",
        "隐私权纠纷",
    ),
    (r"名誉|造谣|诽谤|诋毁|侮辱|污蔑|冤枉|乱说|瞎说|胡说|没有这回事", "名誉权纠纷"),
    (r"隐私", "隐私权纠纷"),
    (r"肖像|照片[^，。？]{0,8}(?:广告|宣传)", "肖像权纠纷"),
    (r"(?:商场|超市|酒店|饭店|餐厅|宾馆|游泳|景区)[^。？]{0,16}(?:摔|滑倒|受伤)", "违反安全保障义务责任纠纷"),
    # medical
    (r"美容|整形|玻尿酸|医美", "医疗服务合同纠纷"),
    (
        r"医疗|误诊|手术|诊所|打针|输液|接生|(?:医院|医生|护士)[^。？]{0,12}(?:责任|过错|失误|错|不当|耽误|延误|没有?及时)",
        "医疗损害责任纠纷",
    ),  # not 医院 alone: every injury question went to one
    # companies
    (r"查账|账本|账目|知情权", "股东知情权纠纷"),
    (r"分红", "公司盈余分配纠纷"),
    (r"股东(?:大)?会|董事会|决议", "公司决议纠纷"),
    (r"(?:股份|股权)[^。？]{0,8}转|转[^。？]{0,8}(?:股份|股权)", "股权转让纠纷"),
    (r"入股|股东资格|代持|股东", "股东资格确认纠纷"),
    # expropriation and the administration
    (r"承包地[^。？]{0,12}(?:征|补偿)|征地补偿", "承包地征收补偿费用分配纠纷"),
    (r"(?:签了|签订了?|按)[^。？]{0,8}(?:补偿|安置|拆迁|征收)?协议", "拆迁安置补偿协议"),
    (r"(?:拆迁|征收|拆)[^。？]{0,12}补偿|补偿款[^。？]{0,12}(?:拆|征收)", "征收补偿"),
    (r"强拆|违建|违章建筑|强制拆除", "行政强制"),
    (r"拆迁|征收|拆(?:我|了)", "征收补偿"),
    (r"罚款|罚了|被罚|拘留|处罚|吊销|没收|扣分", "行政处罚"),
    (r"营业执照|许可|审批|执照|办证", "行政许可"),
    (
        r"不作为|不回复|没有?回复|不处理|不予答复|不履行[^，。？]{0,4}职责|审(?:核|批)[^。？]{0,8}(?:没|不|迟迟)|"
        r"没(?:有)?(?:结果|下文|答复)",
        "不履行法定职责",
    ),
    (r"行政协议|政府[^。？]{0,10}协议", "行政协议"),
    # building
    (r"施工|包工|承建|工程|分包|总包", "建设工程施工合同纠纷"),
    (r"装修|装潢", "装饰装修合同纠纷"),
    # intellectual property
    (r"商标|logo|LOGO|山寨", "侵害商标权纠纷"),
    (r"专利", "专利权侵权纠纷"),
    (r"著作权|版权|盗版|抄袭|小说|作品|搬运|转载|盗用", "著作权侵权纠纷"),
    (r"不正当竞争", "不正当竞争纠纷"),
    # contracts
    (r"挂靠", "挂靠经营合同纠纷"),
    (r"加盟", "特许经营合同纠纷"),
    (r"合伙|退伙", "合伙合同纠纷"),
    (r"加工|定做|定制|承揽", "承揽合同纠纷"),
    (r"快递|物流|托运|运输", "运输合同纠纷"),
    (r"寄存|保管|停车[^，。？]{0,6}(?:丢|坏|刮)", "保管合同纠纷"),
    (r"保险[^，。？]{0,8}(?:拒赔|不赔|理赔)", "保险合同纠纷"),
    (r"培训|课程|学费|报(?:了)?[^，。？]{0,4}班", "教育培训合同纠纷"),
    (r"网购|网上买|淘宝|天猫|拼多多|京东|直播间|网店|闲鱼", "网络购物合同纠纷"),
    (r"健身|办卡|预付卡|会员卡|充值", "服务合同纠纷"),
    (
        r"货款|卖给|订(?:了)?[^，。？]{0,4}货|退货|换货|发错货|退款|假货|三倍赔偿|十倍赔偿|买(?:了|到|的)|买东西|卖家|"
        r"质量|吃出|变质|过期|食物中毒",
        "买卖合同纠纷",
    ),
    # a generic injury last: after every more specific way to be hurt
    (r"打(?:伤|了我|我|破)|被[^，。？]{0,4}打|误伤|受伤|摔伤|骨折|伤残", "生命权、身体权、健康权纠纷"),
)

#: The family a question of these domains belongs to when no rule names its cause (nearly every case of
#: the domain is of it); any other domain's question without a rule has no known cause.
DOMAIN_DEFAULTS = {
    "labor": "劳动争议",
    "traffic": "机动车交通事故责任纠纷",
    "medical": "医疗损害责任纠纷",
    "demolition": "征收补偿",
}

_CHARGES = tuple((re.compile(p), cause) for p, cause in CHARGE_RULES)
_CIVIL = tuple((re.compile(p), cause) for p, cause in CIVIL_RULES)
#: A civil cause of action the question writes out (``这属于民间借贷纠纷吗``): the Chinese before 纠纷, after
#: the last word that introduces it (a charge is read by :data:`CHARGE_RULES`: 得罪 must not be one).
_NAMED = re.compile(
    r"([\u4e00-\u9fff、]{2,20}?(?:合同|权|责任|借贷|关系|继承|赔偿|争议|得利|管理|分配|协议))纠纷"
)
_INTRODUCER = re.compile(r"^.*(?:属于|涉及|关于|[于是为的起个])")
CRIMINAL = "criminal"  # the criminal domain's id


#: A charge the question names outright (职务侵占, 交通肇事): the charges of :data:`CHARGE_RULES`, without 罪,
#: of three characters or more (two-character ones, 盗窃 and 诈骗, are left to the rules' context).
_NAMED_CHARGES = tuple(
    (cause[:-1], cause) for _, cause in CHARGE_RULES if len(cause) > 3 and "、" not in cause
)


def _first(rules, text: str) -> str:
    return next((cause for pattern, cause in rules if pattern.search(text)), "")


def question_cause(question: str, domain: str | None = None) -> str:
    """The cause of action (案由, or the charge, or the kind of administrative act) ``question`` is about,
    or ``""`` when no rule says.

    ``domain`` is the consultation domain's id (``labor``, ``criminal``…) when the question was routed:
    a criminal routing tries the charges first, like a question that names a crime
    (:data:`CRIME_CONTEXT`); a domain of :data:`DOMAIN_DEFAULTS` gives its family when no rule matches.

    >>> question_cause("朋友借了我五万块钱一直不还，怎么起诉？")
    '民间借贷纠纷'
    >>> question_cause("我弟弟偷了邻居的电动车被派出所抓了，会判刑吗？")
    '盗窃罪'
    >>> question_cause("房东不退押金怎么办"), question_cause("请问这个怎么办"), question_cause("请问这个怎么办", "labor")
    ('房屋租赁合同纠纷', '', '劳动争议')
    """
    text = " ".join(str(question).split())
    named = _NAMED.search(text)
    if named:
        cause = _INTRODUCER.sub("", named.group(1))
        if len(cause) >= 2 and not cause.startswith(("什么", "哪", "这", "那", "何", "啥")):
            return cause + "纠纷"
    for name, cause in _NAMED_CHARGES:
        if name in text:
            return cause
    if domain == CRIMINAL or CRIME_CONTEXT.search(text):
        order = (_CHARGES, _CIVIL)
    else:
        order = (_CIVIL, _CHARGES)
    for rules in order:
        cause = _first(rules, text)
        if cause:
            return cause
    return DOMAIN_DEFAULTS.get(domain or "", "")
