// Progressive enhancement only: every action also works without this file.

// The one-time key page is a POST response: make reload and back go to the list instead of re-posting the form.
if (document.querySelector('#new-key')) history.replaceState(null, '', '/keys');
// the same for a webhook's signing secret: back to the endpoint's page
const secretReveal = document.querySelector('[data-reveal-return]');
if (secretReveal) history.replaceState(null, '', secretReveal.getAttribute('data-reveal-return'));

// Copy buttons: <button data-copy="#selector" hidden> shown once we can copy.
for (const btn of document.querySelectorAll('[data-copy]')) {
  const target = document.querySelector(btn.getAttribute('data-copy'));
  const status = document.querySelector('[data-copy-status]');
  if (!target) continue;
  btn.hidden = false;
  btn.addEventListener('click', async () => {
    const text = target.textContent.trim();
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      // Not a secure context or no permission: select the text and use the older command.
      const range = document.createRange();
      range.selectNodeContents(target);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      ok = document.execCommand?.('copy');
    }
    btn.textContent = ok ? 'Copied' : 'Copy failed';
    if (status)
      status.textContent = ok
        ? status.getAttribute('data-copied') || 'The key is on your clipboard.'
        : 'Select it and copy it by hand.';
    setTimeout(() => (btn.textContent = 'Copy'), 2500);
  });
}

// Confirmations: a dialog, then the form goes straight to the action (confirm=yes).
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (form.querySelector('input[name=confirm]')) return;
    event.preventDefault();
    if (!window.confirm(form.getAttribute('data-confirm'))) return;
    const yes = document.createElement('input');
    yes.type = 'hidden';
    yes.name = 'confirm';
    yes.value = 'yes';
    form.appendChild(yes);
    form.submit();
  });
}

// Scope shortcuts: read-all / write-all tick every box of their column, and follow it.
for (const all of document.querySelectorAll('[data-scope-all]')) {
  const form = all.form;
  const kind = all.getAttribute('data-scope-all');
  const boxes = [...form.querySelectorAll(`input[data-scope="${kind}"]`)];
  const sync = () => {
    const n = boxes.filter((b) => b.checked).length;
    all.checked = n === boxes.length;
    all.indeterminate = n > 0 && n < boxes.length;
  };
  all.addEventListener('change', () => {
    for (const b of boxes) b.checked = all.checked;
    all.indeterminate = false;
  });
  for (const b of boxes) b.addEventListener('change', sync);
  sync();
}

// Webhook event types: ticking one chooses "only the ones ticked".
for (const choice of document.querySelectorAll('[data-events-choice]')) {
  const chosen = choice.querySelector('[data-events-chosen]');
  for (const box of choice.querySelectorAll('[data-event]'))
    box.addEventListener('change', () => {
      if (box.checked) chosen.checked = true;
    });
}

// Activity filters apply as soon as one changes.
for (const form of document.querySelectorAll('form[data-autosubmit]')) {
  for (const select of form.querySelectorAll('select')) select.addEventListener('change', () => form.submit());
}

// A form error: bring it into view (its field already has the focus, by autofocus).
const formError = document.querySelector('#form-error');
if (formError) formError.scrollIntoView({ block: 'center' });
