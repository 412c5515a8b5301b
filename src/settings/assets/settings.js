// Herald settings page: small progressive touches. Every action also works without this file.
'use strict';

(function () {
  // Times: the server prints UTC; show them in the reader's own time zone.
  var formatter = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  document.querySelectorAll('time[data-local]').forEach(function (el) {
    var d = new Date(el.getAttribute('datetime'));
    if (!isNaN(d.getTime())) {
      el.title = el.textContent;
      el.textContent = formatter.format(d);
    }
  });

  // Live length counter, measured as the platform measures (Bluesky: graphemes; others: code points).
  var segmenter = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;
  function measure(text, unit) {
    if (unit === 'graphemes' && segmenter) {
      var n = 0;
      for (var _ of segmenter.segment(text)) n++;
      return n;
    }
    return Array.from(text).length;
  }
  document.querySelectorAll('textarea[data-limit]').forEach(function (area) {
    var counter = document.querySelector('[data-counter-for="' + area.id + '"]');
    if (!counter) return;
    var limit = Number(area.getAttribute('data-limit'));
    var unit = area.getAttribute('data-unit');
    var word = unit === 'graphemes' ? 'characters' : 'characters';
    function update() {
      var used = measure(area.value, unit);
      var over = used - limit;
      counter.textContent = over > 0 ? used + ' / ' + limit + ' ' + word + ': ' + over + ' too many' : used + ' / ' + limit + ' ' + word;
      counter.classList.toggle('over', over > 0);
      if (over > 0) area.setAttribute('aria-invalid', 'true');
      else area.removeAttribute('aria-invalid');
    }
    area.addEventListener('input', update);
    update();
  });

  // Copy buttons (shown only when the script runs).
  document.querySelectorAll('button[data-copy]').forEach(function (button) {
    var field = document.getElementById(button.getAttribute('data-copy'));
    var status = document.querySelector('[data-copy-status]');
    if (!field) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var done = function () {
        if (status) status.textContent = 'Copied.';
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () {
          field.select();
        });
      } else {
        field.select();
        if (document.execCommand && document.execCommand('copy')) done();
      }
    });
  });

  // "Select all on this page" for the failed posts.
  document.querySelectorAll('input[data-select-all]').forEach(function (box) {
    var name = box.getAttribute('data-select-all');
    var form = box.form;
    var label = form && form.querySelector('[data-select-all-label]');
    box.hidden = false;
    if (label) label.hidden = false;
    box.addEventListener('change', function () {
      form.querySelectorAll('input[type="checkbox"][name="' + name + '"]').forEach(function (c) {
        c.checked = box.checked;
      });
    });
  });
})();
