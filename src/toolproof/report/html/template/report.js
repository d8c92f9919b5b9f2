/* toolproof HTML report. Every piece of text from the data goes into the page as text
   (textContent, text nodes, attributes set one by one), never as markup. */
(function () {
  'use strict';

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

  // ------------------------------------------------------------ overview

  function overview() {
    var root = body('overview');
    var suites = {};
    RUNS.forEach(function (r) { suites[r.suite.name + ' ' + r.suite.version + ' ' + r.suite.hash] = true; });
    if (Object.keys(suites).length > 1) {
      root.append(h('p', { class: 'warn', text: 'These runs are of different suites (or suite versions): compare them with care.' }));
    }
    var runRows = RUNS.map(function (r) {
      var c = r.counts;
      return h('tr', null,
        h('td', { class: 'mono nowrap', text: r.id }), h('td', { class: 'l', text: r.suite.name + ' ' + r.suite.version }),
        h('td', { class: 'l', text: r.agent }), h('td', { class: 'l', text: r.status }),
        h('td', { class: 'l nowrap', text: (r.created_at || '').replace('T', ' ').slice(0, 16) }),
        h('td', { text: int(c.total) }), h('td', { text: int(c.passed) }), h('td', { text: int(c.failed) }), h('td', { text: int(c.infra_error) }),
        h('td', { class: 'l', text: r.infra_errors === 'exclude' ? 'excluded' : 'count as failures' }),
        h('td', { class: 'l nowrap', text: r.k.join(', ') }),
        h('td', { class: 'wrap', text: (r.variants.length ? r.variants : ['']).map(variantName).join(', ') }));
    });
    root.append(card(null, rawTable(['run', 'suite', 'agent', 'status', 'started (UTC)', 'trials', 'passed', 'failed', 'infra errors', 'infra errors', 'k', 'variants']
      .map(function (x, i) { return h('th', { class: i < 5 || i > 8 ? 'l' : null, text: i === 9 ? 'infra policy' : x }); }), runRows)));
    RUNS.forEach(function (r) {
      if (r.stopped) root.append(h('p', { class: 'warn', text: 'Run ' + r.id + ' stopped early: ' + r.stopped }));
      if (r.judge && r.judge.undecided_criteria) {
        var failedControls = Object.keys(r.judge.failed_controls).map(function (task) { return task + ': ' + r.judge.failed_controls[task].join(', '); });
        root.append(h('p', { class: 'warn', text: 'Run ' + r.id + ': ' + r.judge.undecided_criteria + ' rubric ' + (r.judge.undecided_criteria === 1 ? 'criterion' : 'criteria') + ' undecided: the judge ' + r.judge.model + ' failed their controls (' + failedControls.join('; ') + ')' }));
      }
      if (r.status !== 'finished') root.append(h('p', { class: 'warn', text: 'Run ' + r.id + ' is not finished: the numbers cover the trials recorded so far.' }));
      if (r.skipped_k && r.skipped_k.length) root.append(h('p', { class: 'warn', text: 'Run ' + r.id + ': not computed (too few trials): k = ' + r.skipped_k.join(', ') }));
    });
    if (!ENTRIES.length) { root.append(note('No trials recorded.')); return; }
    var kpis = h('div', { class: 'kpis' });
    ENTRIES.forEach(function (e, i) {
      var k = e.k;
      var rel = e.reliability || { missing: [] };
      var measured = PARTS.length - (rel.missing || []).length;
      var c = e.counts;
      var kpi = h('div', { class: 'kpi' });
      kpi.style.borderTopColor = color(i);
      append(kpi, [
        h('div', { class: 'name', text: e.label }),
        h('div', { class: 'sub', text: entryRun(e).suite.name + ' ' + entryRun(e).suite.version + ' · run ' + entryRun(e).id + (e.variant ? ' · main variant ' + e.variant : '') }),
        h('div', { class: 'big' }, h('span', { class: 'value', text: f3(scoreOf(e)) }),
          h('span', { class: 'label', text: 'Reliability Score' + (measured < PARTS.length ? ' · ' + measured + ' of ' + PARTS.length + ' parts measured' : '') })),
        outcomeBar(c),
        h('div', { class: 'legend', text: variantName(e.variant) + ' trials: ' + int(c.passed) + ' passed · ' + int(c.failed) + ' failed · ' + int(c.infra_error) + ' infra errors (of ' + int(c.total) + ')' }),
        allTrials(e),
        h('dl', null,
          h('dt', { text: 'pass@1' }), h('dd', { text: f3(metric(e, 'pass@1')) }),
          h('dt', { text: 'pass^' + k + ' (' + k + ' tries, all pass)' }), h('dd', null, h('b', { text: f3(metric(e, 'pass^' + k)) })),
          h('dt', { text: 'reliability tax@' + k }), h('dd', { text: f3(metric(e, 'reliability_tax@' + k)) }),
          h('dt', { text: 'recovery rate (all variants)' }), h('dd', { text: f3(metric(e, 'recovery_rate')) }),
          h('dt', { text: 'cost of ' + variantName(e.variant) + ' trials' }), h('dd', { text: usd(metric(e, 'cost_usd')) }),
          h('dt', { text: 'cost per pass' }), h('dd', { text: num(metric(e, 'cost_usd')) ? usd(metric(e, 'cost_per_pass_usd')) : '–' }),
          h('dt', { text: 'p95 latency of a model call' }), h('dd', { text: secs(metric(e, 'latency_p95_s')) }),
          h('dt', { text: 'p95 duration of a trial' }), h('dd', { text: secs(metric(e, 'trial_latency_p95_s')) }))]);
      kpis.append(kpi);
    });
    root.append(kpis);
    root.append(note('pass^k: the chance that k trials of the same task all pass — what users feel when they ask for the same thing again. reliability tax@k = pass@1 − pass^k: how much one-shot accuracy overstates consistency.'));
  }

  // ------------------------------------------------------------ score

  var PART_COLORS = ['#2f5fd0', '#2e9e5b', '#e07b24', '#9b59b6', '#c0392b', '#17a2b8'];

  function score() {
    var root = body('score');
    var scored = ENTRIES.filter(function (e) { return e.reliability; });
    if (!scored.length) { root.append(note('No Reliability Score: no trials.')); return; }
    var names = PARTS.map(function (part) { return part.key; });
    var headers = [h('th', { text: 'model' }), h('th', { text: 'Reliability Score' })];
    PARTS.forEach(function (part) { headers.push(h('th', { text: part.label })); });
    var rows = scored.map(function (e) {
      var rel = e.reliability;
      var parts = PARTS.length - (rel.missing || []).length;
      var tr = h('tr', null, modelCell(e), h('td', { class: 'score' }, h('b', { text: f3(rel.reliability_score) }), ciLine((rel.ci || {}).reliability_score),
        parts < PARTS.length && num(rel.reliability_score) ? h('div', { class: 'small muted', text: parts + ' of ' + PARTS.length + ' parts measured' }) : null));
      names.forEach(function (name) {
        var value = rel.components[name];
        var measured = num(value);
        var weight = rel.weights[name];
        var used = rel.weights_used[name];
        tr.append(h('td', { class: measured ? null : 'missing' },
          measured ? f3(value) : 'not measured',
          h('div', { class: 'small muted', text: measured ? 'weight ' + f2(weight) + ' → ' + f3(used) : (num(weight) ? 'weight ' + f2(weight) + ' dropped' : '') })));
      });
      return tr;
    });
    var k = scored[0].reliability.k;
    root.append(card(null,
      note('A weighted mean of the production-condition metrics that were measured: pass^' + k + ' on clean trials, recovery from failed tool calls, completion under the peak load, and pass rate under schema drift. A part that was not measured is left out — never counted as 0 or 1 — and the weights of the others are renormalised to sum to 1 (the "→" weight). The notes below say why a part is missing and how it can be measured.'),
      rawTable(headers, rows)));
    scored.forEach(function (e) {
      (e.reliability.notes || []).forEach(function (text) {
        root.append(note((scored.length > 1 ? e.label + ': ' : '') + 'Reliability Score ' + text));
      });
    });
    var cb = chartBox();
    cb.box.style.height = Math.max(160, 70 + 34 * scored.length) + 'px';
    root.append(card('What each part contributes (weight used × value)', cb.box));
    makeChart(cb.canvas, {
      type: 'bar',
      data: {
        labels: scored.map(function (e) { return e.label; }),
        datasets: PARTS.map(function (part, i) {
          return {
            label: part.label,
            backgroundColor: PART_COLORS[i % PART_COLORS.length],
            data: scored.map(function (e) {
              var v = e.reliability.components[part.key];
              var w = e.reliability.weights_used[part.key];
              return num(v) && num(w) ? v * w : null;
            })
          };
        })
      },
      options: {
        indexAxis: 'y',
        scales: { x: { stacked: true, min: 0, max: 1, title: { display: true, text: 'Reliability Score' } }, y: { stacked: true } },
        plugins: { legend: { position: 'right' }, tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + ': ' + f3(ctx.raw); } } } }
      }
    }, 'Reliability Score by part');
  }

  // ------------------------------------------------------------ pass^k

  function passk() {
    var root = body('passk');
    var withCurve = ENTRIES.filter(function (e) { return e.curve && e.curve.k.length; });
    if (!withCurve.length) { root.append(note('No pass^k: no trials.')); return; }
    var row = h('div', { class: 'row' });
    var a = chartBox('tall');
    var b = chartBox('tall');
    row.append(card('pass^k (solid) and pass@k (dashed) by k', a.box,
      note('pass^k: all k trials of a task pass; pass@k: at least one does. Averaged over tasks, from each task\'s passed and total trials (each model\'s main variant). k runs to the fewest trials of any task.')),
    card('Reliability tax@k = pass@1 − pass^k', b.box, note('What one-shot accuracy hides: the higher the bar, the less consistent the agent.')));
    root.append(row);
    var datasets = [];
    withCurve.forEach(function (e) {
      var i = ENTRIES.indexOf(e);
      datasets.push({
        label: e.label, borderColor: color(i), backgroundColor: color(i), pointRadius: e.curve.k.length > 30 ? 0 : 3, clip: 8,
        borderWidth: 2.5, data: e.curve.k.map(function (k, j) { return { x: k, y: e.curve.pass_hat[j] }; })
      });
      datasets.push({
        label: e.label + ' pass@k', borderColor: color(i), backgroundColor: color(i), borderDash: [5, 4], pointRadius: 0, clip: 8,
        borderWidth: 1.5, data: e.curve.k.map(function (k, j) { return { x: k, y: e.curve.pass_at[j] }; })
      });
    });
    makeChart(a.canvas, {
      type: 'line',
      data: { datasets: datasets },
      options: {
        parsing: false,
        scales: { x: { type: 'linear', min: 1, title: { display: true, text: 'k (trials of the same task)' }, ticks: { precision: 0 } },
          y: { min: 0, max: 1, title: { display: true, text: 'probability' } } },
        interaction: { mode: 'nearest', intersect: false },
        plugins: {
          legend: { labels: { filter: function (item) { return !/ pass@k$/.test(item.text); } } },
          tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + (/ pass@k$/.test(ctx.dataset.label) ? '' : ' pass^k') + ' (k=' + ctx.raw.x + '): ' + f3(ctx.raw.y); } } }
        }
      }
    }, 'pass^k curves');
    var ks = [];
    withCurve.forEach(function (e) { e.ks.forEach(function (k) { if (ks.indexOf(k) < 0) ks.push(k); }); });
    ks.sort(function (x, y) { return x - y; });
    var taxKs = ks.filter(function (k) { return k > 1; });
    if (!taxKs.length) taxKs = ks;
    makeChart(b.canvas, {
      type: 'bar',
      data: {
        labels: taxKs.map(function (k) { return 'k = ' + k; }),
        datasets: withCurve.map(function (e) {
          var i = ENTRIES.indexOf(e);
          return { label: e.label, backgroundColor: color(i), data: taxKs.map(function (k) { var v = metric(e, 'reliability_tax@' + k); return num(v) ? v : null; }) };
        })
      },
      options: { scales: { y: { min: 0, suggestedMax: 0.2, title: { display: true, text: 'pass@1 − pass^k' } } } }
    }, 'reliability tax');
    var headers = [h('th', { text: 'model' }), h('th', { text: 'tasks' }), h('th', { text: 'pass@1' })];
    ks.forEach(function (k) { if (k > 1) headers.push(h('th', { text: 'pass^' + k }), h('th', { text: 'tax@' + k }), h('th', { text: 'pass@' + k }), h('th', { text: 'strict^' + k })); });
    var rows = withCurve.map(function (e) {
      var tr = h('tr', null, modelCell(e), h('td', { text: int(e.tasks) }), ciCell(e, 'pass@1'));
      ks.forEach(function (k) {
        if (k > 1) tr.append(ciCell(e, 'pass^' + k), h('td', { text: f3(metric(e, 'reliability_tax@' + k)) }), h('td', { text: f3(metric(e, 'pass@' + k)) }), h('td', { text: f3(metric(e, 'pass^' + k + '_strict')) }));
      });
      return tr;
    });
    root.append(card('By k', rawTable(headers, rows),
      note('Under each value: its 95% interval (bootstrap over tasks). strict^k: the first k trials of a task all passed.')));
  }

  function ciCell(e, name) {
    var ci = e.ci && e.ci[name];
    return h('td', null, f3(metric(e, name)), ci ? h('div', { class: 'small muted', text: f3(ci[0]) + ' – ' + f3(ci[1]) }) : null);
  }
  // a 95% interval (bootstrap over tasks) as text, '' when there is none
  function ciText(ci) { return ci ? '[' + f3(ci[0]) + ', ' + f3(ci[1]) + ']' : ''; }
  function withCi(value, ci) { return f3(value) + (ci ? ' ' + ciText(ci) : ''); }
  function ciLine(ci) { return ci ? h('div', { class: 'small muted', text: ciText(ci) }) : null; }

  // ------------------------------------------------------------ cost

  function cost() {
    var root = body('cost');
    if (!ENTRIES.length) { root.append(note('No trials.')); return; }
    var row = h('div', { class: 'row' });
    var sc = chartBox('tall');
    var select = h('select', { 'aria-label': 'y axis' },
      h('option', { value: 'score', text: 'Reliability Score' }),
      h('option', { value: 'passk', text: 'pass^k (largest k)' }),
      h('option', { value: 'pass1', text: 'pass@1' }));
    var missingNote = note('');
    var scatterCard = card('Cost versus reliability', h('div', { class: 'controls' }, h('label', null, 'y axis', select)), sc.box,
      missingNote, note('x: cost per trial of each model\'s main variant (USD). Better is up and to the left.'));
    row.append(scatterCard);
    var lat = chartBox('tall');
    row.append(card('Latency (p50 and p95)', lat.box));
    root.append(row);
    function yValue(e, mode) {
      if (mode === 'score') return scoreOf(e);
      if (mode === 'pass1') return metric(e, 'pass@1');
      return metric(e, 'pass^' + e.k);
    }
    function points(mode) {
      var unpriced = ENTRIES.filter(function (e) { return !num(metric(e, 'cost_usd')); });
      var unmeasured = ENTRIES.filter(function (e) { return num(metric(e, 'cost_usd')) && !num(yValue(e, mode)); });
      missingNote.textContent = (unpriced.length ? 'Not plotted, no known price: ' + unpriced.map(function (e) { return e.label; }).join(', ') + '. ' : '') +
        (unmeasured.length ? 'Not plotted, not measured: ' + unmeasured.map(function (e) { return e.label; }).join(', ') + '.' : '');
      return ENTRIES.map(function (e, i) {
        var c = metric(e, 'cost_usd');
        var y = yValue(e, mode);
        if (!num(c) || !num(y)) return null;
        return { label: e.label, backgroundColor: color(i), borderColor: color(i), pointRadius: 7, pointHoverRadius: 9, clip: 12,
          data: [{ x: c / Math.max(1, e.counts.total), y: y, name: e.label }] };
      }).filter(Boolean);
    }
    var pointLabels = {
      id: 'pointLabels',
      afterDatasetsDraw: function (chart) {
        var ctx = chart.ctx;
        ctx.save();
        ctx.font = '12px system-ui, sans-serif';
        ctx.fillStyle = '#1d2430';
        chart.data.datasets.forEach(function (ds, i) {
          var meta = chart.getDatasetMeta(i);
          if (meta.hidden) return;
          meta.data.forEach(function (pt, j) {
            var name = ds.data[j] && ds.data[j].name;
            if (!name) return;
            var text = name.length > 40 ? name.slice(0, 39) + '…' : name;
            var width = ctx.measureText(text).width;
            var right = pt.x + 10 + width <= chart.chartArea.right + 30;
            ctx.textAlign = right ? 'left' : 'right';
            ctx.fillText(text, right ? pt.x + 10 : pt.x - 10, pt.y - 8);
          });
        });
        ctx.restore();
      }
    };
    var scatter = makeChart(sc.canvas, {
      type: 'scatter',
      data: { datasets: points('score') },
      options: {
        layout: { padding: { right: 40, top: 10 } },
        scales: { x: { beginAtZero: true, grace: '10%', title: { display: true, text: 'cost per trial (USD)' }, ticks: { callback: function (v) { return usd(v); } } },
          y: { min: 0, max: 1, title: { display: true, text: 'Reliability Score' } } },
        plugins: { tooltip: { callbacks: { label: function (ctx) { return ctx.raw.name + ': ' + usd(ctx.raw.x) + ' per trial, ' + f3(ctx.raw.y); } } } }
      },
      plugins: [pointLabels]
    }, 'cost versus reliability');
    select.addEventListener('change', function () {
      if (!scatter) return;
      scatter.data.datasets = points(select.value);
      scatter.options.scales.y.title.text = select.options[select.selectedIndex].textContent;
      scatter.update();
    });
    makeChart(lat.canvas, {
      type: 'bar',
      data: {
        labels: DATA.catalogue.latency.map(function (m) { return m.label; }),
        datasets: ENTRIES.map(function (e, i) {
          return { label: e.label, backgroundColor: color(i), data: DATA.catalogue.latency.map(function (m) { var v = metric(e, m.name); return num(v) ? v : null; }) };
        })
      },
      options: { scales: { y: { beginAtZero: true, title: { display: true, text: 'seconds' } } } }
    }, 'latency');
    var userCost = ENTRIES.some(function (e) { var u = metric(e, 'user_cost_usd'); return u === null || (num(u) && u > 0); });
    var names = ['model', 'cost', 'per trial', 'per pass'].concat(userCost ? ['simulated user'] : [],
      ['tokens in', 'tokens out', 'model p50', 'model p95', 'trial p50', 'trial p95', 'tool calls/trial', 'turns/trial']);
    var headers = names.map(function (x) { return h('th', { text: x }); });
    var rows = ENTRIES.map(function (e) {
      var c = metric(e, 'cost_usd');
      var tr = h('tr', null, modelCell(e));
      [usd(c), num(c) ? usd(c / Math.max(1, e.counts.total)) : '–', num(c) ? usd(metric(e, 'cost_per_pass_usd')) : '–']
        .concat(userCost ? [usd(metric(e, 'user_cost_usd'))] : [],
          [int(metric(e, 'tokens_input')), int(metric(e, 'tokens_output')),
            secs(metric(e, 'latency_p50_s')), secs(metric(e, 'latency_p95_s')), secs(metric(e, 'trial_latency_p50_s')), secs(metric(e, 'trial_latency_p95_s')),
            f2(metric(e, 'tool_calls_per_trial')), f2(metric(e, 'turns_per_trial'))]).forEach(function (v) { tr.append(h('td', { text: v })); });
      return tr;
    });
    root.append(card('Spend, tokens and latency (each model\'s main variant)', rawTable(headers, rows),
      note('An unknown price shows as "unpriced", never as $0. Cost per pass counts what infra-error trials spent. Model latency: one model call; trial: a whole trial.' +
        (userCost ? '' : ' No simulated user cost (scripted users).'))));
  }

  // ------------------------------------------------------------ conditions

  // ------------------------------------------------------------ personas and checkpoints

  function conversations() {
    var root = body('conversations');
    var withPersonas = ENTRIES.filter(function (e) { return e.personas; });
    var withTurns = ENTRIES.filter(function (e) { return e.checkpoints; });
    if (!withPersonas.length && !withTurns.length) {
      root.append(note('Not measured: run with --persona NAME or --checkpoints 3,8,15,25.'));
      return;
    }
    if (withPersonas.length) {
      var rows = [];
      withPersonas.forEach(function (e) {
        var k = String(e.k);
        Object.keys(e.personas).forEach(function (name, n) {
          var p = e.personas[name];
          var r = p.recovery || {};
          rows.push([n === 0 ? e.label : '', name, int(p.n_tasks), withCi(p['pass@1'], p.ci['pass@1']),
            withCi(p['pass^k'][k], p.ci['pass^k'][k]), withCi(r.recovery_turns, r.ci), f3(r.recovered)]);
        });
      });
      root.append(card('Personas [95% CI, bootstrap over tasks]',
        table(['model', 'persona', 'tasks', 'pass@1', 'pass^k (k = the run\'s largest)', 'recovery turns (median)', 'recovered'], rows),
        note('Recovery turns: from the confusing message to the agent\'s first correct next action (a call matching a gold call not yet made, or a question to the user); 1 is the reply to that message itself. Null where no confusing message was said.')));
    }
    if (withTurns.length) {
      var a = chartBox('tall');
      var datasets = [];
      var trendRows = [];
      withTurns.forEach(function (e) {
        var i = ENTRIES.indexOf(e);
        var k = String(e.k);
        var lengths = Object.keys(e.checkpoints).map(Number).sort(function (x, y) { return x - y; });
        datasets.push({ label: e.label + ' pass@1', borderColor: color(i), backgroundColor: color(i), borderWidth: 2.5,
          data: lengths.map(function (n) { return { x: n, y: e.checkpoints[String(n)]['pass@1'] }; }) });
        datasets.push({ label: e.label + ' pass^' + k, borderColor: color(i), backgroundColor: color(i), borderDash: [5, 4], borderWidth: 1.5,
          data: lengths.map(function (n) { return { x: n, y: e.checkpoints[String(n)]['pass^k'][k] }; })
            .filter(function (p) { return num(p.y); }) });
        var d = e.checkpoint_degradation || {};
        lengths.forEach(function (n, j) {
          var c = e.checkpoints[String(n)];
          trendRows.push([j === 0 ? e.label : '', String(n), f2(c.user_turns), int(c.n_tasks), withCi(c['pass@1'], c.ci['pass@1']),
            withCi(c['pass^k'][k], c.ci['pass^k'][k]), int(c.too_long.length),
            j === 0 ? (d.reason || withCi(d.value, d.ci)) : '']);
        });
      });
      root.append(card('pass@1 (solid) and pass^k (dashed) against conversation length', a.box,
        table(['model', 'turns', 'user turns measured', 'tasks', 'pass@1', 'pass^k', 'too long', 'checkpoint_degradation (per 10 turns)'], trendRows),
        note('Each task stretched to about N user turns with filler, clarifications and restatements of the same request. A task already longer than N is left out of that checkpoint (too long). checkpoint_degradation: pass@1 lost per 10 more user turns, positive when longer conversations fail more.')));
      makeChart(a.canvas, {
        type: 'line',
        data: { datasets: datasets },
        options: {
          parsing: false,
          scales: { x: { type: 'linear', title: { display: true, text: 'conversation length (user turns)' }, ticks: { precision: 0 } },
            y: { min: 0, max: 1, title: { display: true, text: 'probability' } } },
          plugins: { tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + ' (' + ctx.raw.x + ' turns): ' + f3(ctx.raw.y); } } } }
        }
      }, 'pass rates against conversation length');
    }
  }

  function conditions() {
    var root = body('conditions');
    var any = false;
    var vHeaders = ['model', 'variant', 'trials', 'passed', 'failed · infra', 'pass@1', 'vs clean', 'recovery', 'loops', 'corrective', 'tool errors', 'throughput/min', 'trial p95']
      .map(function (x, j) { return h('th', { class: j < 2 ? 'l' : null, text: x }); });
    var vRows = [];
    var vNotes = [];
    ENTRIES.forEach(function (e) {
      var keys = Object.keys(e.variants || {});
      var recovery = (e.conditions || {}).recovery || {};
      if (keys.length <= 1 && !recovery.failed_calls) return;
      any = true;
      var clean = e.variants[''] ? e.variants['']['pass@1'] : null;
      keys.forEach(function (key, n) {
        var v = e.variants[key];
        var rec = v.recovery || {};
        var load = v.load || {};
        var delta = key !== '' && num(clean) ? v['pass@1'] - clean : null;
        var tr = h('tr', { class: n === 0 ? 'first' : null }, n === 0 ? modelCell(e) : h('td'),
          h('td', { class: 'l' }, key === '' ? chip('clean') : chip(key, key.indexOf('faults:') >= 0 ? 'fault' : 'drift')));
        [int(v.counts.total), int(v.counts.passed), int(v.counts.failed) + ' · ' + int(v.counts.infra_error), f3(v['pass@1']),
          num(delta) ? signed(delta, 3) : '–',
          f3(rec.recovery_rate), f3(rec.loop_rate), f3(rec.corrective_action), f3(load.tool_error_rate),
          num(load.throughput_per_min) ? load.throughput_per_min.toFixed(1) : '–', secs(load.trial_latency_p95_s)].forEach(function (x, j) {
          var td = h('td', { text: x });
          if (j === 4 && num(delta) && delta < -0.0005) td.className = 'neg';
          tr.append(td);
        });
        vRows.push(tr);
      });
      var rci = recovery.ci || {};
      vNotes.push(e.label + runSuffix(e) + ': recovery rate ' + withCi(recovery.recovery_rate, rci.recovery_rate) + ' (' + int(recovery.recovered_calls) + ' of ' +
        int(recovery.failed_calls) + ' failed tool calls recovered), loop rate ' + withCi(recovery.loop_rate, rci.loop_rate) + ', corrective action ' +
        withCi(recovery.corrective_action, rci.corrective_action) + ' (' + int(recovery.faulted_trials) + ' faulted trials).');
    });
    if (vRows.length) {
      root.append(card('Pass rate by variant', rawTable(vHeaders, vRows, 'grouped'),
        note('Over all trials of each model, every variant included — ' + vNotes.join(' ') + ' In brackets: 95% intervals, bootstrap over tasks (none with fewer than 2 tasks to resample).'),
        note('recovery: failed tool calls recovered; loops: trials repeating a failing call 3 times or running out of steps; corrective: faulted trials that still passed; tool errors: share of tool calls that failed.')));
    }
    // recovery by fault kind
    var kinds = [];
    ENTRIES.forEach(function (e) {
      var by = (((e.conditions || {}).recovery) || {}).by_fault || {};
      Object.keys(by).forEach(function (k) { if (kinds.indexOf(k) < 0) kinds.push(k); });
    });
    kinds.sort();
    if (kinds.length) {
      any = true;
      var withKinds = ENTRIES.filter(function (e) { return Object.keys((((e.conditions || {}).recovery) || {}).by_fault || {}).length; });
      var rc = chartBox();
      var rHeaders = [h('th', { text: 'fault' })];
      withKinds.forEach(function (e) { rHeaders.push(h('th', { text: e.label })); });
      var rrows = kinds.map(function (k) {
        var tr = h('tr', null, h('td', { text: k }));
        withKinds.forEach(function (e) {
          var by = e.conditions.recovery.by_fault[k];
          tr.append(h('td', null, by ? f3(by.rate) : '–', by ? h('div', { class: 'small muted', text: by.recovered + ' of ' + by.failed + ' calls' }) : null,
            by ? ciLine((by.ci || {}).rate) : null));
        });
        return tr;
      });
      root.append(card('Recovery by fault kind', h('div', { class: 'split' }, rc.box, h('div', null, rawTable(rHeaders, rrows),
        note('Share of failed tool calls the agent recovered from: a later success of the same tool, or of another tool within 3 calls, in a trial that was not cut short. "genuine": errors with no injected fault, the agent\'s own malformed or invalid calls included.')))));
      makeChart(rc.canvas, {
        type: 'bar',
        data: {
          labels: kinds,
          datasets: withKinds.map(function (e) {
            var by = e.conditions.recovery.by_fault;
            return { label: e.label, backgroundColor: color(ENTRIES.indexOf(e)), data: kinds.map(function (k) { return by[k] ? by[k].rate : null; }) };
          })
        },
        options: { scales: { y: { min: 0, max: 1, title: { display: true, text: 'recovery rate' } } } }
      }, 'recovery by fault kind');
    }
    // drift
    var driftEntries = ENTRIES.filter(function (e) { return (e.conditions || {}).drift; });
    if (driftEntries.length) {
      any = true;
      var names = [];
      driftEntries.forEach(function (e) { Object.keys(e.conditions.drift.variants).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); }); });
      var dc = chartBox();
      var dHeaders = ['model', 'clean pass@1', 'drift robustness', 'ratio to clean'].concat(names).map(function (x) { return h('th', { text: x }); });
      var drows = driftEntries.map(function (e) {
        var d = e.conditions.drift;
        var dci = d.ci || {};
        var tr = h('tr', null, modelCell(e), h('td', { text: f3(d.clean_pass_rate) }), h('td', null, h('b', { text: f3(d.drift_robustness) }), ciLine(dci.drift_robustness)),
          h('td', null, f2(d.ratio_to_clean) + '×', ciLine(dci.ratio_to_clean)));
        names.forEach(function (n) {
          var v = d.variants[n];
          tr.append(h('td', null, v ? f3(v.pass_rate) : '–', v ? h('div', { class: 'small muted', text: f2(v.ratio_to_clean) + '× clean' }) : null));
        });
        return tr;
      });
      root.append(card('Schema drift', h('div', { class: 'split' }, dc.box, h('div', null, rawTable(dHeaders, drows),
        note('pass@1 when tools are renamed, parameters change and fields move (each drift variant of the suite). drift robustness: the mean over variants. Under a value: its 95% interval (bootstrap over tasks, the ratio on the same tasks).')))));
      makeChart(dc.canvas, {
        type: 'bar',
        data: {
          labels: ['clean'].concat(names),
          datasets: driftEntries.map(function (e) {
            var d = e.conditions.drift;
            return { label: e.label, backgroundColor: color(ENTRIES.indexOf(e)), data: [d.clean_pass_rate].concat(names.map(function (n) { return d.variants[n] ? d.variants[n].pass_rate : null; })) };
          })
        },
        options: { scales: { y: { min: 0, max: 1, title: { display: true, text: 'pass@1' } } } }
      }, 'pass rate under schema drift');
    }
    // load
    var loadEntries = ENTRIES.filter(function (e) { return (e.conditions || {}).load; });
    if (loadEntries.length) {
      any = true;
      var levels = [];
      loadEntries.forEach(function (e) { Object.keys(e.conditions.load.levels).forEach(function (l) { l = Number(l); if (levels.indexOf(l) < 0) levels.push(l); }); });
      levels.sort(function (x, y) { return x - y; });
      var lc = chartBox();
      var lHeaders = ['model', 'concurrent', 'pass@1', 'throughput/min', 'trial p95', 'tool errors'].map(function (x) { return h('th', { text: x }); });
      var lrows = [];
      loadEntries.forEach(function (e) {
        var L = e.conditions.load;
        levels.forEach(function (l) {
          if (L.levels[String(l)] === undefined) return;
          var v = (e.variants['load:' + l] || {}).load || {};
          var tr = h('tr', null, modelCell(e));
          [String(l) + (l === L.peak ? ' (peak)' : '') + (l === L.baseline ? ' (baseline)' : ''), f3(L.levels[String(l)]),
            num(v.throughput_per_min) ? v.throughput_per_min.toFixed(1) : '–', secs(v.trial_latency_p95_s), f3(v.tool_error_rate)].forEach(function (x) { tr.append(h('td', { text: x })); });
          lrows.push(tr);
        });
      });
      root.append(card('Concurrent load', h('div', { class: 'split' }, lc.box, h('div', null, rawTable(lHeaders, lrows),
        note(loadEntries.map(function (e) {
          var L = e.conditions.load;
          var lci = L.ci || {};
          return e.label + ': completion under load ' + withCi(L.completion_under_load, lci.completion_under_load) + ' at ' + L.peak + ' concurrent trials, ' +
            f2(L.ratio_to_baseline) + '× the baseline' + (lci.ratio_to_baseline ? ' ' + ciText(lci.ratio_to_baseline) : '');
        }).join('; ') + '. Level 1 stands for the clean trials when it was not run. In brackets: 95% intervals, bootstrap over tasks.')))));
      makeChart(lc.canvas, {
        type: 'line',
        data: {
          labels: levels.map(String),
          datasets: loadEntries.map(function (e) {
            var i = ENTRIES.indexOf(e); var L = e.conditions.load.levels;
            return { label: e.label, borderColor: color(i), backgroundColor: color(i), pointRadius: 4, spanGaps: true, clip: 8,
              data: levels.map(function (l) { var v = L[String(l)]; return num(v) ? v : null; }) };
          })
        },
        options: { scales: { x: { title: { display: true, text: 'concurrent trials' } }, y: { min: 0, max: 1, title: { display: true, text: 'pass@1' } } } }
      }, 'pass rate under load');
    }
    if (any) conditionBreakdowns(root);
    if (!any) root.append(note('No production conditions in these runs: no failed tool call, no fault profile, drift variant or load level. A suite declares them under faults:, drift: and load: (docs/conditions.md); a run takes them with --faults, --drift, --load or --profile full.'));
  }

  // recovery, drift robustness and completion under load per tier and per task
  var BREAKDOWN_COLUMNS = [
    ['recovery', 'recovery', 'recovery_rate'], ['recovery', 'loops', 'loop_rate'], ['recovery', 'corrective', 'corrective_action'],
    ['drift', 'drift robustness', 'drift_robustness'], ['drift', 'vs clean', 'ratio_to_clean'],
    ['load', 'under load', 'completion_under_load'], ['load', 'vs baseline', 'ratio_to_baseline']
  ];

  function conditionBreakdowns(root) {
    function measured(e, kind) {
      var x = e.conditions || {};
      return kind === 'recovery' ? (x.recovery || {}).failed_calls : x[kind];
    }
    var kinds = ['recovery', 'drift', 'load'].filter(function (kind) { return ENTRIES.some(function (e) { return measured(e, kind); }); });
    var shown = ENTRIES.filter(function (e) { return kinds.some(function (kind) { return measured(e, kind); }); });
    if (!shown.length) return;
    var columns = BREAKDOWN_COLUMNS.filter(function (c) { return kinds.indexOf(c[0]) >= 0; });
    function rows(by, keyName) {
      var out = [];
      shown.forEach(function (e) {
        var keys = [];
        kinds.forEach(function (kind) { Object.keys(e.conditions[kind + '_by_' + by] || {}).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
        keys.sort();
        keys.forEach(function (key, n) {
          var tr = h('tr', { class: n === 0 ? 'first' : null }, n === 0 ? modelCell(e) : h('td'), h('td', { class: 'l', text: keyName(key) }));
          columns.forEach(function (c) {
            var v = (e.conditions[c[0] + '_by_' + by] || {})[key];
            var x = v ? v[c[2]] : null;
            tr.append(h('td', { text: c[2].indexOf('ratio') === 0 ? (num(x) ? f2(x) + '×' : '–') : f3(x) }));
          });
          out.push(tr);
        });
      });
      return out;
    }
    function headers(first) {
      return ['model', first].concat(columns.map(function (c) { return c[1]; })).map(function (x, j) { return h('th', { class: j < 2 ? 'l' : null, text: x }); });
    }
    var taskRows = rows('task', function (k) { return k; });
    root.append(card('Conditions by tier and by task', rawTable(headers('tier'), rows('tier', function (k) { return 'tier ' + k; }), 'grouped'),
      note('Per tier: recovery pools the trials of the tasks using a tool of the tier; drift robustness and completion under load are means over those tasks weighted by production weights, and each ratio divides the two weighted means. Per task: the same over the task\'s own trials.'),
      h('details', null, h('summary', { text: 'By task (' + int(taskRows.length) + ' rows)' }), rawTable(headers('task'), taskRows, 'grouped'))));
  }

  // ------------------------------------------------------------ tiers and tags

  function accountability() {
    var root = body('blame');
    var checked = ENTRIES.filter(function (e) { return e.policy; });
    if (checked.length) {
      var rules = [];
      checked.forEach(function (e) { Object.keys(e.policy.violations).forEach(function (r) { if (rules.indexOf(r) < 0) rules.push(r); }); });
      rules.sort();
      var pRows = checked.map(function (e) {
        var p = e.policy;
        return [modelCell(e), int(p.trials), h('td', null, f3(p.policy_adherence), ciLine(p.ci.policy_adherence)), int(p.violating_trials)]
          .concat(rules.map(function (r) { return int(p.violations[r] || 0); }));
      });
      root.append(card('Policy adherence and violations by rule', table(['model', 'checked trials', 'policy_adherence', 'violating trials'].concat(rules), pRows),
        note('policy_adherence: per task, the share of its graded trials that broke no policy rule, averaged over tasks; 95% interval by bootstrap over tasks. A trial counts once under each rule it broke.')));
    } else {
      root.append(note('No policy rule was checked: policy adherence is not measured.'));
    }
    var failing = ENTRIES.filter(function (e) { return e.counts.failed; });
    if (!failing.length) { root.append(note('No failed trial to attribute.')); return; }
    var parties = [];
    failing.forEach(function (e) { Object.keys(e.blame || {}).forEach(function (p) { if (parties.indexOf(p) < 0) parties.push(p); }); });
    var bRows = failing.map(function (e) {
      var rules = [];
      Object.keys(e.blame_rules || {}).forEach(function (party) {
        Object.keys(e.blame_rules[party]).forEach(function (rule) { rules.push(rule + ' ' + e.blame_rules[party][rule]); });
      });
      return [modelCell(e), int(e.counts.failed)].concat(parties.map(function (p) { return int((e.blame || {})[p] || 0); }),
        [h('td', { class: 'wrap', text: rules.join(', ') })]);
    });
    root.append(card('Failed trials by blame', table(['model', 'failed'].concat(parties, ['rules']), bRows),
      note('Each failed trial is blamed on the first party an explicit rule finds at fault (environment, then the simulated user, then a grader), otherwise on the agent; the counts sum to the failed trials.')));
  }

  function breakdown() {
    var root = body('breakdown');
    var tiers = [];
    ENTRIES.forEach(function (e) { Object.keys(e.tiers || {}).forEach(function (t) { if (tiers.indexOf(t) < 0) tiers.push(t); }); });
    tiers.sort();
    function valueCell(v, e) {
      var x = v ? v['pass^' + e.k] : null;
      return h('td', { class: 'mv', title: v ? 'pass@1 ' + f3(v['pass@1']) + ', pass^' + e.k + ' ' + f3(x) : null },
        h('span', { text: f3(x) }), meter(x));
    }
    function modelHeaders(first) {
      return first.map(function (x) { return h('th', { class: 'l', text: x }); }).concat(ENTRIES.map(function (e) {
        var th = h('th', { class: 'mv', title: e.label + runSuffix(e) }, h('i', { class: 'dot' }), e.label + ' pass^' + e.k);
        th.firstChild.style.background = color(ENTRIES.indexOf(e));
        return th;
      }));
    }
    if (tiers.length) {
      var tc = chartBox('short');
      var trows = tiers.map(function (t) {
        var any = ENTRIES.map(function (e) { return (e.tiers || {})[t]; }).filter(Boolean)[0] || {};
        var tr = h('tr', null, h('td', { text: 'tier ' + t }), h('td', { class: 'l', text: int(any.tasks) }), h('td', { class: 'l', text: f2(any.weight) }));
        ENTRIES.forEach(function (e) { tr.append(valueCell((e.tiers || {})[t], e)); });
        return tr;
      });
      root.append(card('By tier (weighted by production weights)', h('div', { class: 'split' }, tc.box, h('div', null, rawTable(modelHeaders(['tier', 'tasks', 'weight']), trows),
        note('A task counts in a tier when it uses a tool of that tier, weighted by those tools\' share of production calls. Hover a value for pass@1.')))));
      makeChart(tc.canvas, {
        type: 'bar',
        data: {
          labels: tiers.map(function (t) { return 'tier ' + t; }),
          datasets: ENTRIES.map(function (e, i) {
            return { label: e.label + ' pass^' + e.k, backgroundColor: color(i), data: tiers.map(function (t) { var v = (e.tiers || {})[t]; return v ? v['pass^' + e.k] : null; }) };
          })
        },
        options: { scales: { y: { min: 0, max: 1 } } }
      }, 'pass^k by tier');
    }
    var tags = [];
    ENTRIES.forEach(function (e) { Object.keys(e.tags || {}).forEach(function (t) { if (tags.indexOf(t) < 0) tags.push(t); }); });
    if (tags.length) {
      function worst(t) {
        var vals = ENTRIES.map(function (e) { var v = (e.tags || {})[t]; return v ? v['pass^' + e.k] : null; }).filter(num);
        return vals.length ? vals.reduce(function (a, b) { return a + b; }, 0) / vals.length : 2;
      }
      tags.sort(function (a, b) { return worst(a) - worst(b) || (a < b ? -1 : 1); });
      var rows = tags.map(function (t) {
        var n = Math.max.apply(null, ENTRIES.map(function (e) { return ((e.tags || {})[t] || {}).tasks || 0; }));
        var tr = h('tr', null, h('td', { text: t }), h('td', { class: 'l', text: int(n) }));
        ENTRIES.forEach(function (e) { tr.append(valueCell((e.tags || {})[t], e)); });
        return tr;
      });
      root.append(card('By tag (worst first)', rawTable(modelHeaders(['tag', 'tasks']), rows), note('Plain means over the tasks with the tag. Hover a value for pass@1.')));
    }
    if (!tiers.length && !tags.length) root.append(note('No tiers or tags.'));
  }

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

  // ------------------------------------------------------------ go

  function footer() {
    var f = document.getElementById('footer');
    f.append('Generated by toolproof ' + DATA.toolproof_version + ' on ' + DATA.generated_at.replace('T', ' ') + '. ' +
      int(TX.total) + ' trials, ' + int(TX.embedded) + ' full records embedded. Charts: Chart.js (MIT). This file works offline.');
  }

  [overview, score, passk, cost, conditions, accountability, conversations, breakdown, gridSection, footer].forEach(function (part) {
    try { part(); } catch (err) {
      var where = part.name ? document.getElementById(part.name === 'gridSection' ? 'grid' : part.name === 'accountability' ? 'blame' : part.name) : null;
      var target = where ? (where.querySelector('.body') || where) : document.getElementById('app');
      target.append(h('p', { class: 'warn', text: 'This part of the report failed to draw: ' + err }));
      if (window.console) console.error(err);
    }
  });
  document.documentElement.setAttribute('data-charts', String(charts.length));
  fromHash();
})();
