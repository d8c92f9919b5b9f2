/* The breakdowns: conversations, conditions, personas and checkpoints, blame, tiers and tags. */
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

