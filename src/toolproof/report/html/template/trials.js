/* Every trial: the grid of outcomes, and one trial's record in the drawer. */
  // ------------------------------------------------------------ grid

  var gridState = { entry: 0, variant: null, page: 0, col: 0, filter: '', failing: false, sort: 'worst' };
  var PAGE_TASKS = 25;
  var PAGE_TRIALS = 50;

  function gridSection() {
    var root = body('grid');
    if (!GROUPS.length) { root.append(note('No trials.')); return; }
    var entrySel = h('select', { 'aria-label': 'model' });
    ENTRIES.forEach(function (e, i) { entrySel.append(h('option', { value: i, text: e.label + runSuffix(e) })); });
    var variantSel = h('select', { 'aria-label': 'variant' });
    var search = h('input', { type: 'search', placeholder: 'filter tasks', 'aria-label': 'filter tasks' });
    var failing = h('input', { type: 'checkbox' });
    var sortSel = h('select', { 'aria-label': 'sort' }, h('option', { value: 'worst', text: 'worst first' }), h('option', { value: 'id', text: 'task id' }));
    var pager = h('span', { class: 'pager' });
    var colPager = h('span', { class: 'pager' });
    var reasonsBox = h('div');
    var tableBox = h('div', { class: 'scroll' });
    var txNote = TX.embedded === TX.total
      ? 'Click a cell for the trial\'s full record: transcript, tool calls, verdicts and world diff.'
      : 'Full records of ' + int(TX.embedded) + ' of ' + int(TX.total) + ' trials are embedded (every trial that did not pass first, then passing trials of every task; budget ' + TX.budget_mb + ' MB, raise it with --transcripts-mb). Click a cell to open one.';
    root.append(h('div', { class: 'controls' }, h('label', null, 'model', entrySel), h('label', null, 'variant', variantSel)));
    root.append(reasonsBox);
    root.append(card(null,
      h('div', { class: 'controls' }, h('label', null, 'sort', sortSel), search, h('label', null, failing, 'only tasks with failures'), pager, colPager),
      note(txNote), legend(), tableBox));

    function groupsOf() {
      return GROUPS.filter(function (g) { return g.e === gridState.entry && g.v === gridState.variant; });
    }
    function fillVariants() {
      variantSel.textContent = '';
      var seen = [];
      GROUPS.forEach(function (g) { if (g.e === gridState.entry && seen.indexOf(g.v) < 0) seen.push(g.v); });
      seen.forEach(function (v) { variantSel.append(h('option', { value: v, text: variantName(v) })); });
      gridState.variant = seen.length ? seen[0] : '';
      variantSel.value = gridState.variant;
    }
    function draw() {
      var list = groupsOf();
      var f = gridState.filter.toLowerCase();
      if (f) list = list.filter(function (g) { return g.task.toLowerCase().indexOf(f) >= 0; });
      if (gridState.failing) list = list.filter(function (g) { return g.c < g.o.length; });
      if (gridState.sort === 'worst') {
        list = list.slice().sort(function (a, b) {
          return (a.c / Math.max(1, a.n)) - (b.c / Math.max(1, b.n)) || ((num(a.k) ? a.k : 2) - (num(b.k) ? b.k : 2)) || (a.task < b.task ? -1 : a.task > b.task ? 1 : 0);
        });
      }
      var pages = Math.max(1, Math.ceil(list.length / PAGE_TASKS));
      gridState.page = Math.min(gridState.page, pages - 1);
      var maxTrials = 0;
      list.forEach(function (g) { maxTrials = Math.max(maxTrials, g.o.length); });
      var cols = Math.max(1, Math.ceil(maxTrials / PAGE_TRIALS));
      gridState.col = Math.min(gridState.col, cols - 1);
      var shown = list.slice(gridState.page * PAGE_TASKS, (gridState.page + 1) * PAGE_TASKS);
      var c0 = gridState.col * PAGE_TRIALS;
      var e = ENTRIES[gridState.entry];
      var rows = shown.map(function (g) {
        var cells = h('td', { class: 'cells' });
        var end = Math.min(g.o.length, c0 + PAGE_TRIALS);
        for (var j = c0; j < end; j++) {
          var code = g.o.charAt(j);
          var trialNo = g.t ? g.t[j] : j;
          var reason = g.r ? REASONS[g.r[j]] : '';
          var cell = h('span', { class: 'cell ' + code, tabindex: 0, role: 'button', 'data-i': g.s + j,
            title: 'trial ' + trialNo + ' · ' + OUTCOME[code] + (reason ? '\n' + reason : '') });
          cells.append(cell);
        }
        var top = topReason(g);
        return h('tr', null,
          h('td', { class: 'task', title: g.task, text: g.task }),
          h('td', { text: g.c + '/' + g.o.length }),
          h('td', { text: f3(g.k) }),
          cells,
          h('td', { class: 'why', title: top, text: top }));
      });
      tableBox.textContent = '';
      tableBox.append(rawTable([h('th', { text: 'task' }), h('th', { text: 'passed' }), h('th', { text: 'pass^' + e.k }),
        h('th', { class: 'l', text: 'trials' + (cols > 1 ? ' ' + (c0 + 1) + '–' + Math.min(maxTrials, c0 + PAGE_TRIALS) : '') }),
        h('th', { class: 'l', text: 'most frequent failure' })], rows, 'grid'));
      if (!list.length) tableBox.append(note('No task matches.'));
      pager.textContent = '';
      pager.append(
        h('button', { type: 'button', text: '◀', disabled: gridState.page === 0 ? 'disabled' : null, 'aria-label': 'previous tasks', on: { click: function () { gridState.page--; draw(); } } }),
        'tasks ' + (list.length ? gridState.page * PAGE_TASKS + 1 : 0) + '–' + Math.min(list.length, (gridState.page + 1) * PAGE_TASKS) + ' of ' + list.length,
        h('button', { type: 'button', text: '▶', disabled: gridState.page >= pages - 1 ? 'disabled' : null, 'aria-label': 'next tasks', on: { click: function () { gridState.page++; draw(); } } }));
      colPager.textContent = '';
      if (cols > 1) {
        colPager.append(
          h('button', { type: 'button', text: '◀', disabled: gridState.col === 0 ? 'disabled' : null, 'aria-label': 'earlier trials', on: { click: function () { gridState.col--; draw(); } } }),
          'trials ' + (c0 + 1) + '–' + Math.min(maxTrials, c0 + PAGE_TRIALS) + ' of ' + maxTrials,
          h('button', { type: 'button', text: '▶', disabled: gridState.col >= cols - 1 ? 'disabled' : null, 'aria-label': 'later trials', on: { click: function () { gridState.col++; draw(); } } }));
      }
      drawReasons();
    }
    function drawReasons() {
      var e = ENTRIES[gridState.entry];
      reasonsBox.textContent = '';
      if (!e.reasons || !e.reasons.length) { reasonsBox.append(card('Why trials fail: ' + e.label, note('No failed trial.'))); return; }
      var rows = e.reasons.map(function (r) { return [h('td', { class: 'wrap', text: r.reason }), int(r.trials), int(r.tasks)]; });
      reasonsBox.append(card('Why trials fail: ' + e.label + ' (all variants, most frequent first)', table(['reason', 'trials', 'tasks'], rows)));
      reasonsBox.lastChild.classList.add('reasons');
    }
    entrySel.addEventListener('change', function () { gridState.entry = Number(entrySel.value); gridState.page = 0; gridState.col = 0; fillVariants(); draw(); });
    variantSel.addEventListener('change', function () { gridState.variant = variantSel.value; gridState.page = 0; gridState.col = 0; draw(); });
    sortSel.addEventListener('change', function () { gridState.sort = sortSel.value; gridState.page = 0; draw(); });
    search.addEventListener('input', function () { gridState.filter = search.value; gridState.page = 0; draw(); });
    failing.addEventListener('change', function () { gridState.failing = failing.checked; gridState.page = 0; draw(); });
    function activate(ev) {
      var t = ev.target;
      if (!(t instanceof Element) || !t.classList.contains('cell')) return;
      if (ev.type === 'keydown' && ev.key !== 'Enter' && ev.key !== ' ') return;
      ev.preventDefault();
      openTrial(Number(t.getAttribute('data-i')));
    }
    tableBox.addEventListener('click', activate);
    tableBox.addEventListener('keydown', activate);
    fillVariants();
    draw();
  }

  function topReason(g) {
    if (!g.r) return '';
    var counts = {};
    var best = 0;
    var bestCount = 0;
    for (var j = 0; j < g.r.length; j++) {
      var id = g.r[j];
      if (!id) continue;
      counts[id] = (counts[id] || 0) + 1;
      if (counts[id] > bestCount) { best = id; bestCount = counts[id]; }
    }
    return best ? REASONS[best] : '';
  }

  // ------------------------------------------------------------ trial records

  var where = null;
  var chunkCache = {};

  function locate(i) {
    if (!where) {
      where = new Map();
      TX.chunks.forEach(function (ids, c) { ids.forEach(function (id, pos) { where.set(id, [c, pos]); }); });
    }
    return where.get(i);
  }

  function loadChunk(c) {
    if (!chunkCache[c]) {
      chunkCache[c] = (async function () {
        var el = document.getElementById('tx-' + c);
        var b64 = el ? el.textContent.trim() : '';
        var bin = atob(b64);
        var bytes = new Uint8Array(bin.length);
        for (var j = 0; j < bin.length; j++) bytes[j] = bin.charCodeAt(j);
        var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
        var text = await new Response(stream).text();
        return JSON.parse(text);
      })();
    }
    return chunkCache[c];
  }

  function groupOf(i) {
    var lo = 0; var hi = GROUPS.length - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      var g = GROUPS[mid];
      if (i < g.s) hi = mid - 1;
      else if (i >= g.s + g.o.length) lo = mid + 1;
      else return g;
    }
    return null;
  }

  var drawer = document.getElementById('drawer');
  var drawerBody = document.getElementById('drawer-body');
  var drawerTitle = document.getElementById('drawer-title');
  var current = null;
  var openToken = 0;

  function openTrial(i) {
    var g = groupOf(i);
    if (!g) return;
    current = i;
    var token = ++openToken;
    var j = i - g.s;
    var e = ENTRIES[g.e];
    var code = g.o.charAt(j);
    var trialNo = g.t ? g.t[j] : j;
    drawerTitle.textContent = g.task + ' · trial ' + trialNo;
    drawerBody.textContent = '';
    drawerBody.append(h('div', { class: 'facts' },
      fact('outcome', outcomeChip(OUTCOME[code])), fact('model', e.label), fact('run', RUNS[e.run].id),
      fact('variant', variantName(g.v)), fact('task', g.task), fact('trial', String(trialNo))));
    var reason = g.r ? REASONS[g.r[j]] : '';
    if (reason) drawerBody.append(h('div', { class: 'reason', text: reason }));
    document.getElementById('drawer-prev').disabled = j === 0;
    document.getElementById('drawer-next').disabled = j >= g.o.length - 1;
    drawer.hidden = false;
    drawer.setAttribute('data-trial', String(i));
    if (location.hash !== '#trial=' + i) history.replaceState(null, '', '#trial=' + i);
    var at = locate(i);
    if (!at) {
      drawerBody.append(note('This trial\'s full record is not embedded in this report (size budget). Render a report of fewer runs, or with a larger --transcripts-mb, to see it.', 'warn'));
      return;
    }
    var loading = note('Loading the record…');
    drawerBody.append(loading);
    loadChunk(at[0]).then(function (records) {
      if (token !== openToken) return;
      loading.remove();
      renderRecord(records[at[1]]);
      drawer.setAttribute('data-loaded', String(i));
    }).catch(function (err) {
      if (token !== openToken) return;
      loading.textContent = 'Could not read the record: ' + err;
    });
  }

  function fact(label, value) {
    return h('div', null, h('span', { text: label }), value instanceof Node ? value : h('b', { text: value }));
  }

  function jsonText(value, indent) {
    var text;
    try { text = typeof value === 'string' ? value : JSON.stringify(value, null, indent ? 2 : 0); } catch (err) { text = String(value); }
    return text === undefined ? 'null' : text;
  }

  function pretty(value) {
    var compact = jsonText(value, false);
    return h('pre', { class: 'json', text: compact.length <= 110 ? compact : jsonText(value, true) });
  }

  function collapsible(label, value) {
    var compact = jsonText(value, false);
    if (compact.length <= 110) return h('div', { class: 'kv' }, label + ' ', h('code', { class: 'inline', text: compact }));
    var text = jsonText(value, true);
    if (text.length < 700) return h('div', null, h('div', { class: 'kv', text: label }), h('pre', { class: 'json', text: text }));
    var d = h('details', null, h('summary', { text: label + ' (' + text.length.toLocaleString('en-US') + ' characters)' }));
    d.addEventListener('toggle', function () { if (d.open && d.childNodes.length === 1) d.append(h('pre', { class: 'json', text: text })); });
    return d;
  }

  function renderRecord(r) {
    if (!r || typeof r !== 'object') { drawerBody.append(note('Empty record.')); return; }
    var usage = r.usage || {};
    drawerBody.append(h('div', { class: 'facts' },
      fact('agent', String(r.agent || '')), fact('seed', String(r.seed)), fact('started', String(r.started_at || '').replace('T', ' ').slice(0, 23)),
      fact('duration', secs(r.duration_s)), fact('ended', String(r.ended || '–')),
      fact('tokens in / out', int(usage.input_tokens || 0) + ' / ' + int(usage.output_tokens || 0)),
      fact('cost', usd(r.cost_usd)), fact('simulated user cost', usd(r.user_cost_usd)),
      fact('tool calls · turns', String(r.tool_calls) + ' · ' + String(r.turns)),
      fact('final state', r.expected_hash ? (r.final_hash === r.expected_hash ? 'as expected' : 'differs from expected') : 'no expected state'),
      r.blame ? fact('blamed on', r.blame.party + ' (' + r.blame.rule + ': ' + r.blame.reason + ')') : null));
    var verdicts = r.verdicts || [];
    drawerBody.append(h('h3', { text: 'Verdicts' }));
    drawerBody.append(verdicts.length ? table(['grader', 'verdict', 'reason'], verdicts.map(function (v) {
      return [String(v.grader), v.passed ? chip('passed', 'pass') : chip('failed', 'fail'), h('td', { class: 'wrap', text: String(v.reason || '') })];
    })) : note('No verdicts (the trial did not reach grading).'));
    var cond = r.conditions || {};
    var faults = Object.keys(cond.failed || {});
    if (faults.length || cond.looped || cond.faulted) {
      drawerBody.append(h('p', { class: 'note', text: 'Failed tool calls: ' + (faults.length ? faults.map(function (k) {
        return k + ' ' + (cond.recovered || {})[k] + '/' + cond.failed[k] + ' recovered';
      }).join(', ') : 'none') + (cond.looped ? ' · looped' : '') + (cond.faulted ? ' · faulted' : '') }));
    }
    var events = ((r.transcript || {}).events) || [];
    drawerBody.append(h('h3', { text: 'Transcript (' + events.length + (events.length === 1 ? ' event)' : ' events)') }));
    var list = h('ol', { class: 'timeline' });
    events.forEach(function (ev) { list.append(renderEvent(ev)); });
    drawerBody.append(list);
    var diff = r.world_diff || [];
    drawerBody.append(h('h3', { text: 'World diff (' + diff.length + (diff.length === 1 ? ' change)' : ' changes)') }));
    drawerBody.append(diff.length ? table(['op', 'path', 'before', 'after'], diff.map(function (c) {
      return [String(c.op), h('td', { class: 'wrap mono', text: String(c.path) }),
        h('td', { class: 'wrap mono', text: c.op === 'add' ? '' : JSON.stringify(c.old) }),
        h('td', { class: 'wrap mono', text: c.op === 'remove' ? '' : JSON.stringify(c.value) })];
    })) : note('The agent changed nothing.'));
    var raw = h('details', null, h('summary', { text: 'raw record (JSON)' }));
    raw.addEventListener('toggle', function () { if (raw.open && raw.childNodes.length === 1) raw.append(pretty(r)); });
    drawerBody.append(raw);
  }

  function renderEvent(ev) {
    var t = h('div', { class: 't', text: num(ev.t) ? ev.t.toFixed(3) + ' s' : '' });
    var main = h('div');
    var li = h('li', { class: 'ev' }, t, main);
    if (ev.type === 'message') {
      li.classList.add(ev.role === 'user' ? 'user' : 'assistant');
      main.append(h('div', { class: 'head' }, chip(ev.role === 'user' ? 'user' : 'assistant'), h('b', { text: ev.role === 'user' ? 'User says' : 'Agent says' })),
        h('div', { class: 'text', text: String(ev.content) }));
    } else if (ev.type === 'model_call') {
      var usage = ev.usage || {};
      main.append(h('div', { class: 'head' }, chip(ev.role === 'user' ? 'user model' : 'model turn'), h('b', { text: String(ev.model || '') }),
        h('span', { class: 'meta', text: secs(ev.latency_s) + ' · ' + int(usage.input_tokens || 0) + ' in / ' + int(usage.output_tokens || 0) + ' out' +
          (usage.cached_tokens ? ' (' + int(usage.cached_tokens) + ' cached)' : '') + ' · ' + usd(ev.cost_usd) + (ev.stop_reason ? ' · stop: ' + ev.stop_reason : '') })));
      if (ev.content) main.append(h('div', { class: 'text', text: String(ev.content) }));
      (ev.tool_calls || []).forEach(function (call) {
        var label = 'asks for ' + String(call.name) + (call.id ? ' (' + call.id + ')' : '');
        if (call.arguments === null || call.arguments === undefined) {
          main.append(h('div', { class: 'kv' }, label + ' ', chip('malformed arguments', 'fail')), h('pre', { class: 'json', text: String(call.raw_arguments || '') }));
        } else {
          main.append(collapsible(label, call.arguments));
        }
      });
    } else if (ev.type === 'tool_call') {
      if (ev.is_error) li.classList.add('error');
      var head = h('div', { class: 'head' }, chip('tool'), h('b', { text: String(ev.name) }));
      if (ev.tool && ev.tool !== ev.name) head.append(chip('drift → ' + ev.tool, 'drift'));
      if (ev.fault) head.append(chip('fault: ' + ev.fault, 'fault'));
      if (ev.is_error) head.append(chip('error' + (ev.error_kind ? ': ' + ev.error_kind : ''), 'fail'));
      head.append(h('span', { class: 'meta', text: secs(ev.latency_s) + (ev.call_id ? ' · ' + ev.call_id : '') }));
      main.append(head);
      if (ev.arguments === null || ev.arguments === undefined) {
        main.append(h('div', { class: 'kv', text: 'arguments (could not be parsed)' }), h('pre', { class: 'json', text: String(ev.raw_arguments || '') }));
      } else {
        main.append(collapsible('arguments', ev.arguments));
      }
      if (ev.tool && ev.tool_arguments) main.append(collapsible('as the suite\'s ' + ev.tool + ' took them', ev.tool_arguments));
      main.append(collapsible(ev.is_error ? 'error' : 'result', ev.result));
    } else if (ev.type === 'end') {
      main.append(h('div', { class: 'head' }, chip('end'), h('b', { text: String(ev.reason) }), ev.detail ? h('span', { class: 'meta', text: String(ev.detail) }) : null));
    } else {
      main.append(h('div', { class: 'head' }, chip(String(ev.type || 'event'))), pretty(ev));
    }
    return li;
  }

  function closeDrawer() {
    drawer.hidden = true;
    current = null;
    openToken++;
    if (location.hash.indexOf('#trial=') === 0) history.replaceState(null, '', location.pathname + location.search);
  }

  drawer.addEventListener('click', function (ev) {
    var t = ev.target;
    if (t instanceof Element && t.getAttribute('data-close')) closeDrawer();
  });
  document.getElementById('drawer-prev').addEventListener('click', function () { if (current !== null) openTrial(current - 1); });
  document.getElementById('drawer-next').addEventListener('click', function () { if (current !== null) openTrial(current + 1); });
  document.addEventListener('keydown', function (ev) {
    if (drawer.hidden) return;
    if (ev.key === 'Escape') closeDrawer();
    else if (ev.key === 'ArrowLeft' && current !== null && !document.getElementById('drawer-prev').disabled) openTrial(current - 1);
    else if (ev.key === 'ArrowRight' && current !== null && !document.getElementById('drawer-next').disabled) openTrial(current + 1);
  });
  function fromHash() {
    var m = /^#trial=(\d+)$/.exec(location.hash);
    if (m) openTrial(Number(m[1]));
  }
  window.addEventListener('hashchange', fromHash);

