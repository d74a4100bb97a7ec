
element.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-mark]');
  if (!button || button.disabled || !element.contains(button)) return;
  trigger('click', {node: button.dataset.node, mark: button.dataset.mark});
});
element.addEventListener('change', (event) => {
  const menu = event.target.closest('select[data-issue]');
  if (!menu || menu.disabled || !menu.value || !element.contains(menu)) return;
  trigger('select', {issue: menu.value});
});
// the issue in force is the option the server marked selected: a redrawn menu (another domain's issue chosen,
// the domain changed) must not keep showing what the browser had selected before the redraw
const syncIssue = () => element.querySelectorAll('select[data-issue]').forEach((menu) => {
  const chosen = [...menu.options].find((o) => o.defaultSelected);
  if (chosen && menu.value !== chosen.value) menu.value = chosen.value;
});
new MutationObserver(syncIssue).observe(
  element, {childList: true, subtree: true, attributes: true, attributeFilter: ['selected']}
);
syncIssue();
element.addEventListener('input', (event) => {
  const box = event.target.closest('input[data-issue-filter]');
  if (!box || !element.contains(box)) return;
  const menu = box.closest('.ll-issue').querySelector('select[data-issue]');
  const words = box.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
  menu.querySelectorAll('optgroup').forEach((group) => {
    let shown = 0;
    group.querySelectorAll('option').forEach((option) => {
      const text = (option.textContent + ' ' + group.label).toLowerCase();
      const hit = option.selected || words.every((w) => text.includes(w));
      option.hidden = !hit;
      option.disabled = !hit;
      shown += hit ? 1 : 0;
    });
    group.hidden = !shown;
  });
});
element.addEventListener('keydown', (event) => {
  const box = event.target.closest('input[data-issue-filter]');
  if (!box || event.key !== 'Enter' || !element.contains(box)) return;
  event.preventDefault();
  const menu = box.closest('.ll-issue').querySelector('select[data-issue]');
  const left = [...menu.querySelectorAll('option')].filter((o) => !o.hidden && !o.selected && o.value);
  if (left.length === 1 && !menu.disabled) { menu.value = left[0].value; trigger('select', {issue: menu.value}); }
});
