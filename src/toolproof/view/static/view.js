/* toolproof view: draws the trends page's charts from its JSON block with the bundled
   Chart.js. Names from the store reach the page only as text (Chart.js draws them on the
   canvas); nothing here builds markup. The page records what it drew (data-charts) and any
   error or blocked resource (data-problems) on <html>, for people and tests alike. */
(function () {
  'use strict';

  var root = document.documentElement;
  var problems = [];
  function problem(text) {
    problems.push(text);
    root.setAttribute('data-problems', problems.join(' | '));
  }
  window.addEventListener('error', function (event) { problem('error: ' + event.message); });
  document.addEventListener('securitypolicyviolation', function (event) {
    problem('blocked: ' + event.violatedDirective + ' ' + event.blockedURI);
  });

  var block = document.getElementById('tp-trends');
  if (!block) return;
  if (!window.Chart) { problem('error: Chart.js did not load'); return; }
  var DATA = JSON.parse(block.textContent);
  var PALETTE = ['#2f5fd0', '#e07b24', '#2e9e5b', '#9b59b6', '#c0392b', '#17a2b8',
    '#6c7a89', '#b8860b', '#d63384', '#34495e'];

  function num(v) { return typeof v === 'number' && isFinite(v); }
  function format(unit, v) {
    if (!num(v)) return '–';
    if (unit === 'usd') return '$' + String(Number(v.toPrecision(3)));
    if (unit === 'seconds') return v < 1 ? (v * 1000).toFixed(1) + ' ms' : v.toFixed(2) + ' s';
    return v.toFixed(3);
  }
  function yScale(unit) {
    var scale = { beginAtZero: true, ticks: { callback: function (v) { return format(unit, v); } } };
    if (unit === 'share') { scale.min = 0; scale.max = 1; }
    return scale;
  }

  function draw(canvas, metric) {
    var datasets = metric.series.map(function (series) {
      var c = PALETTE[DATA.models.indexOf(series.model) % PALETTE.length];
      return {
        label: series.model, data: series.values, borderColor: c, backgroundColor: c,
        spanGaps: true, tension: 0, pointRadius: 3, pointHoverRadius: 5
      };
    });
    return new Chart(canvas, {
      type: 'line',
      data: { labels: DATA.runs.map(function (run) { return run.label; }), datasets: datasets },
      options: {
        animation: false,
        maintainAspectRatio: false,
        interaction: { mode: 'nearest', intersect: true },
        scales: { y: yScale(metric.unit) },
        plugins: {
          legend: { labels: { boxWidth: 12, color: '#4a5563' } },
          tooltip: {
            callbacks: {
              title: function (items) {
                var run = DATA.runs[items[0].dataIndex];
                return 'run ' + run.id + ' · ' + run.created_at.slice(0, 16).replace('T', ' ');
              },
              label: function (item) { return item.dataset.label + ': ' + format(metric.unit, item.raw); }
            }
          }
        },
        onClick: function (event, elements) {
          if (elements.length) window.location.href = DATA.runs[elements[0].index].report;
        }
      }
    });
  }

  var byName = {};
  DATA.metrics.forEach(function (metric) { byName[metric.name] = metric; });
  var drawn = 0;
  Array.prototype.forEach.call(document.querySelectorAll('canvas[data-metric]'), function (canvas) {
    var metric = byName[canvas.getAttribute('data-metric')];
    if (!metric || !DATA.runs.length) return;
    draw(canvas, metric);
    drawn += 1;
  });
  root.setAttribute('data-charts', String(drawn));
})();
