/* The summary parts of the report: overview, Reliability Score, pass^k, cost. */
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

