// payrelay console: draws the overview charts from the data-* attributes the server rendered
// (JSON as escaped attribute text, never inline script). Loaded with `defer` from the console itself.
'use strict';

const OUTCOME_COLOURS = { SUCCEEDED: '#1e7d3a', FAILED: '#b3261e', REJECTED: '#e8710a', REVERSED: '#7c3aed', NEEDS_REVIEW: '#9a6700' };

function readData(canvas) {
  try {
    return JSON.parse(canvas.dataset.chart || '{}');
  } catch {
    return {};
  }
}

function drawChart(canvas) {
  const data = readData(canvas);
  const datasets = (data.series || []).map((s) => ({
    label: s.label,
    data: s.values,
    backgroundColor: OUTCOME_COLOURS[s.label] || '#2457c5',
    stack: data.stacked ? 'all' : undefined,
  }));
  new window.Chart(canvas, {
    type: 'bar',
    data: { labels: data.labels || [], datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      scales: { x: { stacked: Boolean(data.stacked), title: { display: true, text: data.xTitle || '' } }, y: { stacked: Boolean(data.stacked), beginAtZero: true, title: { display: true, text: data.yTitle || '' } } },
      plugins: { legend: { display: datasets.length > 1 } },
    },
  });
  canvas.dataset.rendered = 'true';
}

document.addEventListener('DOMContentLoaded', () => {
  if (!window.Chart) return;
  for (const canvas of document.querySelectorAll('canvas[data-chart]')) drawChart(canvas);
});
