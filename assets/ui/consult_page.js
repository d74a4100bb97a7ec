
if (!window.__llPage) {
  window.__llPage = true;
  // a text of the script in the page's language (Gradio sets <html lang>; Chinese unless it is English)
  const __llSay = (texts) => (document.documentElement.lang || '').toLowerCase().startsWith('en') ? texts.en : texts['zh-CN'];
  // the chat's messages are the consultation's Chinese text: said so, for the English page (its notes and
  // footers carry their own lang)
  const markChat = () => document.querySelectorAll('#ll-chat [data-testid="user"], #ll-chat [data-testid="bot"], #ll-report')
    .forEach((el) => { if (!el.hasAttribute('lang')) el.setAttribute('lang', 'zh-CN'); });
  new MutationObserver(markChat).observe(document.body, {childList: true, subtree: true});
  const question = (event) => event.target instanceof Element && event.target.closest('#ll-question textarea');
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || !question(event) || event.isComposing || event.keyCode === 229) return;
    if (event.shiftKey || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    event.stopPropagation();
    const ask = document.querySelector('#ll-ask');
    if (ask && !ask.disabled) ask.click();
  }, true);
  document.addEventListener('keypress', (event) => {
    if (event.key === 'Enter' && question(event)) event.stopPropagation();
  }, true);
  document.addEventListener('click', (event) => {
    const clear = event.target instanceof Element && event.target.closest(__CLEARS__);
    if (!clear || clear.disabled) return;
    if (document.querySelector('#ll-chat [data-testid="user"]') && !window.confirm(__CONFIRM__)) {
      event.preventDefault();
      event.stopImmediatePropagation();
      return;
    }
    try { sessionStorage.removeItem(__KEY__); localStorage.removeItem(__KEY__); } catch (error) {}
    // a new consultation forgets the client's name too
    const name = document.querySelector('#ll-client textarea, #ll-client input');
    if (name && name.value) { name.value = ''; name.dispatchEvent(new Event('input', {bubbles: true})); }
  }, true);
  // a click on a mark: once the tree is drawn again, the focus goes back to the same button (FOCUS_AFTER)
  document.addEventListener('click', (event) => {
    const mark = event.target instanceof Element && event.target.closest('#ll-tree button[data-mark]');
    if (mark) window.__llFocus = `#ll-tree button[data-node="${CSS.escape(mark.dataset.node)}"][data-mark="${CSS.escape(mark.dataset.mark)}"]`;
  }, true);
  const actions = () => {  // what can act now, while no step runs (ACTIONS)
    const closed = !!document.querySelector('#ll-domain.ll-off');
    const asked = !!document.querySelector('#ll-chat [data-testid="user"]');
    const answered = document.querySelectorAll('#ll-chat [data-testid="bot"]').length > 0;
    const awaiting = !!document.querySelector('#ll-tree button[data-mark]:not([disabled])');
    for (const [id, on] of [['#ll-submit', awaiting], ['#ll-regenerate', answered && !awaiting && !closed], ['#ll-end', asked]]) {
      const button = document.querySelector(id);
      if (button && button.disabled === on) { button.disabled = !on; button.setAttribute('aria-disabled', String(!on)); }
    }
  };
  // how long the running step has taken so far, in the message of a step at work (ELAPSED)
  setInterval(() => {
    const seconds = window.__llSteps ? Math.floor((Date.now() - window.__llSince) / 1000) : -1;
    document.querySelectorAll('#ll-message .ll-elapsed').forEach((el) => {
      el.textContent = seconds >= 0 ? __ELAPSED__.replace('{s}', seconds) : '';
    });
    if (!window.__llSteps) actions();
  }, 250);
}
