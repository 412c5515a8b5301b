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
  // (settings-counting.spec.ts runs the functions from here to "counting ends" against the server's.)
  var segmenter = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;
  function measure(text, unit) {
    if (unit === 'graphemes' && segmenter) {
      var n = 0;
      for (var _ of segmenter.segment(text)) n++;
      return n;
    }
    return Array.from(text).length;
  }
  // A Mastodon instance's count (the server's mastodon-text.ts counts the same way): the link
  // field at the end of the text, every link as `urlLength`, a mention of another server's
  // account as its local part, and the content warning with the text.
  var LINK =
    /(^|[^\p{L}\p{M}\p{N}\p{Pc}@$#＠＃])(https?:\/\/[\p{L}\p{M}\p{N}\p{Pc}-]+(?:\.[\p{L}\p{M}\p{N}\p{Pc}-]+)+(?::\d{1,5})?(?:[/?#][^\s]*)?)/giu;
  var MENTION =
    /(?<![=/\p{L}\p{M}\p{N}\p{Pc}])@([a-z0-9_]+(?:[.-]+[a-z0-9_]+)*)(?:@[\p{L}\p{M}\p{N}\p{Pc}.-]+[\p{L}\p{M}\p{N}\p{Pc}]+)?/giu;
  function trimLink(url) {
    for (;;) {
      var before = url;
      url = url.replace(/[.,:;!?'"’”…*]+$/u, '');
      if (url.endsWith(')') && url.split('(').length < url.split(')').length) url = url.slice(0, -1);
      if (url === before) return url;
    }
  }
  function measureStatus(text, link, spoiler, urlLength) {
    var status = !link || text.indexOf(link) >= 0 ? text : text.trim() === '' ? link : text.replace(/\s+$/, '') + '\n\n' + link;
    var countable = status
      .replace(LINK, function (_all, before, url) {
        var kept = trimLink(url);
        return before + 'x'.repeat(urlLength) + url.slice(kept.length);
      })
      .replace(MENTION, function (_all, name) {
        return '@' + name;
      });
    return measure((spoiler || '') + countable, 'graphemes');
  }
  // counting ends
  document.querySelectorAll('textarea[data-limit]').forEach(function (area) {
    var counter = document.querySelector('[data-counter-for="' + area.id + '"]');
    if (!counter) return;
    var limit = Number(area.getAttribute('data-limit'));
    var unit = area.getAttribute('data-unit');
    var urlLength = area.hasAttribute('data-url-length') ? Number(area.getAttribute('data-url-length')) : null;
    var word = unit === 'graphemes' ? 'characters' : 'characters';
    function update() {
      var used = urlLength === null ? measure(area.value, unit) : measureStatus(area.value, '', '', urlLength);
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

  // The person's time zone (from the browser), kept for the pages that show or take times
  // (composer, calendar): the server's fallback when a form or link names none.
  var zone = '';
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
  } catch (e) {
    zone = '';
  }
  var hadZone = /(?:^|; )herald_tz=/.test(document.cookie);
  if (zone) document.cookie = 'herald_tz=' + encodeURIComponent(zone) + '; path=/settings; SameSite=Strict';

  // "+05:30" for a zone now ('' when the browser cannot say).
  function offsetOf(z) {
    try {
      var parts = new Intl.DateTimeFormat('en-US', { timeZone: z, timeZoneName: 'longOffset' }).formatToParts(new Date());
      for (var i = 0; i < parts.length; i++) {
        if (parts[i].type === 'timeZoneName') {
          var v = parts[i].value.replace('GMT', '');
          return v === '' ? '+00:00' : v;
        }
      }
    } catch (e) {
      return '';
    }
    return '';
  }
  document.querySelectorAll('select[data-zone-select]').forEach(function (select) {
    var label = document.querySelector('[data-zone-label]');
    function show() {
      var off = offsetOf(select.value);
      if (label) label.textContent = select.value + (off ? ' (UTC' + off + ')' : '');
    }
    // First visit (the server could not know the zone yet): the browser's own.
    if (!hadZone && zone && select.querySelector('option[value="' + zone + '"]')) select.value = zone;
    select.addEventListener('change', show);
    show();
  });

  // The composer's counters: under the text and under each thread part, one per chosen account,
  // counted as its platform counts.
  document.querySelectorAll('form[data-compose]').forEach(function (form) {
    var boxes = form.querySelectorAll('input[type="checkbox"][name="accounts"][data-limit]');
    form.querySelectorAll('textarea[data-compose-text]').forEach(function (area) {
      var list = document.getElementById(area.getAttribute('data-counters'));
      if (!list) return;
      var isPart = area.hasAttribute('data-part');
      // Scheduled posts have fixed accounts: the server's lines carry what to count by.
      var fixed = Array.prototype.map.call(list.querySelectorAll('li[data-limit]'), function (old) {
        return {
          name: old.getAttribute('data-account-name'),
          platform: old.getAttribute('data-account-platform'),
          limit: Number(old.getAttribute('data-limit')),
          unit: old.getAttribute('data-unit'),
          urlLength: old.hasAttribute('data-url-length') ? Number(old.getAttribute('data-url-length')) : null,
        };
      });
      // The link that goes with this text (the post's, or the part's) and the content warning: a Mastodon instance counts both.
      var linkField = isPart
        ? form.querySelector('[name="' + area.name.replace('part_text_', 'part_link_') + '"]')
        : form.querySelector('#link');
      var spoilerField = form.querySelector('[data-spoiler]');
      function line(name, platform, limit, unit, urlLength) {
        var used =
          urlLength === null
            ? measure(area.value, unit)
            : measureStatus(area.value, linkField ? linkField.value.trim() : '', spoilerField ? spoilerField.value.trim() : '', urlLength);
        var over = used - limit;
        var li = document.createElement('li');
        li.className = 'counter' + (over > 0 ? ' over' : '');
        li.textContent =
          name + ' (' + platform + '): ' + used + ' / ' + limit + ' characters' + (over > 0 ? ': ' + over + ' too many' : '');
        return { li: li, over: over > 0 };
      }
      function update() {
        var any = false;
        var items = [];
        var chosen = [];
        if (boxes.length > 0) {
          boxes.forEach(function (box) {
            if (box.checked)
              chosen.push({
                name: box.getAttribute('data-account-name'),
                platform: box.getAttribute('data-account-platform'),
                limit: Number(box.getAttribute('data-limit')),
                unit: box.getAttribute('data-unit'),
                urlLength: box.hasAttribute('data-url-length') ? Number(box.getAttribute('data-url-length')) : null,
                threads: box.getAttribute('data-threads') !== 'false',
              });
          });
        } else {
          chosen = fixed;
        }
        chosen.forEach(function (a) {
          if (isPart && a.threads === false) {
            var refused = document.createElement('li');
            refused.className = 'counter over';
            refused.textContent = a.name + ' (' + a.platform + '): has no threads';
            items.push(refused);
            any = true;
            return;
          }
          var l = line(a.name, a.platform, a.limit, a.unit, a.urlLength === undefined ? null : a.urlLength);
          any = any || l.over;
          items.push(l.li);
        });
        if (items.length === 0) {
          var none = document.createElement('li');
          none.className = 'counter muted';
          none.textContent = 'Choose an account to see its counter.';
          items.push(none);
        }
        list.replaceChildren.apply(list, items);
        if (any) area.setAttribute('aria-invalid', 'true');
        else area.removeAttribute('aria-invalid');
      }
      area.addEventListener('input', update);
      if (linkField) linkField.addEventListener('input', update);
      if (spoilerField) spoilerField.addEventListener('input', update);
      boxes.forEach(function (box) {
        box.addEventListener('change', update);
      });
      update();
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
