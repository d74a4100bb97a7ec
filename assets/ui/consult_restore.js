
(state) => {
  let kept = '';
  try {
    for (const store of [localStorage, sessionStorage]) {
      Object.keys(store).filter((key) => key.startsWith('gradio:run-history:')).forEach((key) => store.removeItem(key));
    }
    localStorage.removeItem(__KEY__);
    kept = sessionStorage.getItem(__KEY__) || '';
  } catch (error) {}
  return [state, kept];
}
