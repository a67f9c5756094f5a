// gpumesh pages: every <button data-copy="element-id"> copies that element's text.
(() => {
  async function copy(button) {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    try {
      await navigator.clipboard.writeText(source.textContent);
      button.textContent = 'Copied';
    } catch {
      // No clipboard permission (plain http, old browser): select the text so Ctrl-C works.
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = 'Press Ctrl-C';
    }
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 2000);
  }

  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.addEventListener('click', () => copy(button));
  }
})();
