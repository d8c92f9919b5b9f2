/* toolproof HTML report: the run's data, Chart.js's defaults and the helpers every part
   draws with. Every piece of text from the data goes into the page as text (textContent,
   text nodes, attributes set one by one), never as markup. The parts of the script share one
   function scope: render.py joins them in order inside it. */

  var DATA = JSON.parse(document.getElementById('tp-data').textContent);
  var RUNS = DATA.runs;
  var ENTRIES = DATA.entries;
  var GROUPS = DATA.grid.groups;
  var REASONS = DATA.grid.reasons;
  var TX = DATA.transcripts;
  var PARTS = DATA.catalogue.parts;  // the Reliability Score's parts: key (in components) and label
  var PALETTE = ['#2f5fd0', '#e07b24', '#2e9e5b', '#9b59b6', '#c0392b', '#17a2b8',
    '#6c7a89', '#b8860b', '#d63384', '#34495e'];
  var OUTCOME = { p: 'passed', f: 'failed', i: 'infra_error' };
  var charts = [];

  if (window.Chart) {
    Chart.defaults.animation = false;
    Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
    Chart.defaults.font.size = 12;
    Chart.defaults.color = '#4a5563';
    Chart.defaults.maintainAspectRatio = false;
    Chart.defaults.plugins.legend.labels.boxWidth = 12;
  }

  // ------------------------------------------------------------ helpers

  function h(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        var value = props[key];
        if (value === null || value === undefined || value === false) return;
        if (key === 'class') node.className = value;
        else if (key === 'text') node.textContent = String(value);
        else if (key === 'on') Object.keys(value).forEach(function (ev) { node.addEventListener(ev, value[ev]); });
        else if (key === 'width') node.style.width = value;
        else node.setAttribute(key, String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function append(node, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { append(node, k); }); return; }
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }

  function num(v) { return typeof v === 'number' && isFinite(v); }
  // toFixed keeps the sign of a value that rounds to zero (-1e-16 is "-0.000"): not shown
  function fixed(v, d) { var s = v.toFixed(d); return Number(s) === 0 ? (0).toFixed(d) : s; }
  function signed(v, d) { var s = fixed(v, d); return (Number(s) < 0 ? '−' + s.slice(1) : '+' + s); }
  function f3(v) { return num(v) ? fixed(v, 3) : '–'; }
  function f2(v) { return num(v) ? fixed(v, 2) : '–'; }
  function int(v) { return num(v) ? Math.round(v).toLocaleString('en-US') : '–'; }
  function usd(v) {
    if (v === null || v === undefined) return 'unpriced';
    if (!num(v)) return '–';
    if (v === 0) return '$0';
    if (Math.abs(v) < 1) return '$' + String(Number(v.toPrecision(3)));
    return '$' + v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
  function secs(v) {
    if (!num(v)) return '–';
    if (v < 1) return (v * 1000).toFixed(v < 0.01 ? 1 : 0) + ' ms';
    return v.toFixed(2) + ' s';
  }
  function variantName(v) { return v === '' ? 'clean' : v; }
  function color(i) { return PALETTE[i % PALETTE.length]; }
  function card(title) {
    var c = h('div', { class: 'card' });
    if (title) c.append(h('h3', { text: title }));
    for (var i = 1; i < arguments.length; i++) append(c, arguments[i]);
    return c;
  }
  function note(text, cls) { return h('p', { class: cls || 'note', text: text }); }
  function body(id) { return document.querySelector('#' + id + ' .body'); }
  function table(headers, rows, opts) {
    var t = h('table', { class: (opts && opts.cls) || null });
    var tr = h('tr');
    headers.forEach(function (x) { tr.append(h('th', { text: x })); });
    t.append(h('thead', null, tr));
    var tb = h('tbody');
    rows.forEach(function (row) {
      if (row instanceof Node) { tb.append(row); return; }
      var r = h('tr');
      row.forEach(function (cellValue) {
        r.append(cellValue instanceof Node && cellValue.tagName === 'TD' ? cellValue : h('td', null, cellValue));
      });
      tb.append(r);
    });
    t.append(tb);
    return h('div', { class: 'scroll' }, t);
  }
  function rawTable(headers, rows, cls) {
    var t = h('table', { class: cls || null }, h('thead', null, h('tr', null, headers)), h('tbody', null, rows));
    return h('div', { class: 'scroll' }, t);
  }
  function modelCell(e) {
    var i = ENTRIES.indexOf(e);
    var td = h('td', { class: 'model' }, h('i', { class: 'dot' }), e.label);
    td.firstChild.style.background = color(i);
    if (runSuffix(e)) td.append(h('div', { class: 'small muted mono', text: entryRun(e).id }));
    return td;
  }
  function chip(text, kind) { return h('span', { class: 'chip ' + (kind || ''), text: text }); }
  function outcomeChip(outcome) {
    return chip(outcome, outcome === 'passed' ? 'pass' : outcome === 'infra_error' ? 'infra' : 'fail');
  }
  function meter(value) {
    var m = h('div', { class: 'meter', title: f3(value) });
    if (num(value)) m.append(h('span', { width: Math.max(0, Math.min(1, value)) * 100 + '%' }));
    return m;
  }
  function outcomeBar(counts) {
    var total = counts.total || 1;
    return h('div', { class: 'bar', title: counts.passed + ' passed, ' + counts.failed + ' failed, ' + counts.infra_error + ' infra errors' },
      h('span', { class: 'p', width: 100 * counts.passed / total + '%' }),
      h('span', { class: 'f', width: 100 * counts.failed / total + '%' }),
      h('span', { class: 'i', width: 100 * counts.infra_error / total + '%' }));
  }
  function legend() {
    return h('div', { class: 'legend' },
      h('span', null, h('i', { class: 'sw-p' }), 'passed'),
      h('span', null, h('i', { class: 'sw-f' }), 'failed'),
      h('span', null, h('i', { class: 'sw-i' }), 'infra error'));
  }
  function chartBox(cls) {
    var canvas = h('canvas', { role: 'img' });
    return { box: h('div', { class: 'chart ' + (cls || '') }, canvas), canvas: canvas };
  }
  function makeChart(canvas, config, label) {
    if (!window.Chart) return null;
    canvas.setAttribute('aria-label', label || 'chart');
    var chart = new Chart(canvas, config);
    canvas.setAttribute('data-chart', config.type);
    charts.push(chart);
    return chart;
  }
  function entryRun(e) { return RUNS[e.run]; }
  function allTrials(e) {
    var keys = Object.keys(e.variants || {});
    if (keys.length <= 1) return null;
    var total = 0;
    keys.forEach(function (key) { total += e.variants[key].counts.total; });
    return h('div', { class: 'legend', text: int(total) + ' trials over ' + keys.length + ' variants: see Production conditions' });
  }
  function runSuffix(e) {
    var id = entryRun(e).id;
    return RUNS.length > 1 && e.label.indexOf(id) < 0 ? ' · ' + id : '';
  }
  function metric(e, name) { return e.metrics ? e.metrics[name] : undefined; }
  function scoreOf(e) { return e.reliability ? e.reliability.reliability_score : null; }

