"""The 法律咨询 / Consultation tab, in modules by what a reader looks for (see :mod:`lawluo.ui.consult_tab`, which
imports every name the app, the MCP tools and the tests use).

``page`` its scripts, styles and messages; ``view`` what an event shows; ``steps`` Ask and the lawyer's
answers; ``handlers`` marks, domain, issue, end and save; ``restore`` resume, the browser's copy and 新咨询;
``leaving`` a page gone; ``layout`` the components and their events.
"""
