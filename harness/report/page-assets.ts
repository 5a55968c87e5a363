// Stylesheet and browser script shared by the run page and the index page. Plain JS (no
// build step) that runs from file://.

const PAGE_CSS = `
:root { --fg:#1d2327; --muted:#667; --line:#dde1e5; --bg:#fff; --soft:#f5f7f9; --bad:#b3261e; --good:#1e7b34; --warn:#8a5a00; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1400px; margin: 0 auto; padding: 20px 28px 60px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 34px 0 8px; padding-top: 8px; border-top: 1px solid var(--line); }
h3 { font-size: 14px; margin: 18px 0 6px; }
a { color: #0b57d0; }
.sub { color: var(--muted); margin: 0 0 12px; }
.question { font-size: 16px; margin: 10px 0; padding: 10px 14px; background: var(--soft); border-left: 4px solid #8aa4c8; }
.banner { margin: 12px 0; padding: 10px 14px; border-radius: 4px; font-weight: 600; }
.banner.incomplete, .banner.failed { background: #fdecea; color: var(--bad); border: 1px solid #f2b8b5; }
.banner.tcg { background: #fff4e0; color: var(--warn); border: 1px solid #f0d39b; font-weight: 500; }
.banner.disk-model { background: var(--soft); color: var(--fg); border: 1px solid var(--line); font-weight: 500; }
.banner.env { background: var(--soft); color: var(--fg); border: 1px solid var(--line); font-weight: 400; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 12px; font-weight: 600; font-size: 13px; }
.verdict.pass { background: #e3f3e6; color: var(--good); }
.verdict.fail { background: #fdecea; color: var(--bad); }
.verdict.none { background: var(--soft); color: var(--muted); }
.verdict.depends { background: #fff4e0; color: var(--warn); }
table.compact .extra { display: none; }
.column-toggle { font-size: 13px; color: var(--muted); margin: 4px 0; }
.filters label { margin-right: 14px; font-size: 13px; }
#answer h3 { margin-top: 12px; }
nav.toc { font-size: 13px; color: var(--muted); }
nav.toc a { margin-right: 12px; }
ul.findings { padding-left: 20px; margin: 6px 0; }
ul.findings li { margin: 3px 0; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0; }
th, td { padding: 4px 7px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
thead th { background: var(--soft); font-weight: 600; white-space: nowrap; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.muted { color: var(--muted); font-weight: 400; }
.bad { color: var(--bad); font-weight: 600; }
.warn { color: var(--warn); font-weight: 600; }
.note { color: var(--muted); font-size: 12px; max-width: 320px; white-space: normal; }
tr.not-measured td, tr.not-measured th { color: var(--muted); }
tr.trial-row td { background: #fbfcfd; font-size: 12px; }
tr.trial-row td.trial-label { padding-left: 22px; white-space: nowrap; }
tbody th[scope=row] { white-space: nowrap; }
tr.fail td { background: #fff6f5; }
tr.not-evaluated td { background: #fffaf0; }
.reason { margin-top: 4px; color: var(--warn); }
.status { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; background: var(--soft); }
.status-ok, .status-complete { background: #e3f3e6; color: var(--good); }
.status-failed, .status-incomplete, .status-unreadable { background: #fdecea; color: var(--bad); }
.status-skipped, .status-interrupted { background: #fff4e0; color: var(--warn); }
table.sortable thead th { cursor: pointer; user-select: none; }
table.sortable thead th::after { content: ' \\2195'; color: #b0b6bd; font-size: 11px; }
table.sortable thead th[aria-sort=ascending]::after { content: ' \\25B2'; color: var(--fg); }
table.sortable thead th[aria-sort=descending]::after { content: ' \\25BC'; color: var(--fg); }
.table-wrap { overflow-x: auto; }
.two-col { display: flex; gap: 28px; flex-wrap: wrap; align-items: flex-start; }
table.kv caption { text-align: left; font-weight: 600; padding: 4px 0; }
table.kv th { color: var(--muted); font-weight: 500; white-space: nowrap; }
.chart { margin: 8px 0 4px; min-height: 60px; }
.chart-caption { color: var(--muted); font-size: 13px; margin: 2px 0 4px; max-width: 900px; }
.chart-notes { color: var(--warn); font-size: 12px; margin: 2px 0; }
.chart-error { color: var(--bad); font-weight: 600; }
.vega-bind { font-size: 13px; margin: 0 0 6px 4px; }
/* The cell picker belongs above the panels it filters, not under five of them. */
.chart .chart-wrapper { display: flex; flex-direction: column; align-items: flex-start; }
.chart .vega-bindings { order: -1; }
details pre { background: var(--soft); padding: 10px; overflow-x: auto; font-size: 12px; }
.cycle-bar { position: relative; display: flex; height: 14px; background: var(--soft); border-radius: 3px; }
.cycle-seg { display: block; height: 100%; }
.cycle-goal { position: absolute; top: -3px; bottom: -3px; width: 2px; background: #000; }
.cycle-key { white-space: nowrap; margin-right: 10px; font-size: 12px; }
.cycle-swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
`;

/** Click (or Enter on) a header to sort by that column; again to reverse. Numbers sort by data-v. */
export const SORT_JS = `
(function () {
  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) return { empty: true };
    var raw = cell.getAttribute('data-v');
    if (raw === null) raw = cell.textContent.trim();
    if (raw === '' || raw === '\\u2014') return { empty: true };
    var n = Number(raw);
    return isNaN(n) ? { s: raw.toLowerCase() } : { n: n };
  }
  function compare(a, b) {
    if (a.empty || b.empty) return a.empty === b.empty ? 0 : a.empty ? 1 : -1;
    if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
    var x = a.n !== undefined ? String(a.n) : a.s, y = b.n !== undefined ? String(b.n) : b.s;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  function sort(table, th, col) {
    var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    var sign = dir === 'ascending' ? 1 : -1;
    // Tables with one tbody per group (a cell and its trials) sort the groups by their first row.
    var grouped = table.tBodies.length > 1;
    var items = grouped ? Array.prototype.slice.call(table.tBodies) : Array.prototype.slice.call(table.tBodies[0].rows);
    var parent = grouped ? table : table.tBodies[0];
    items = items.map(function (el, i) { return { el: el, k: key(grouped ? el.rows[0] : el, col), i: i }; });
    items.sort(function (a, b) {
      var c = compare(a.k, b.k);
      if (a.k.empty || b.k.empty) return c || a.i - b.i;
      return sign * c || a.i - b.i;
    });
    items.forEach(function (it) { parent.appendChild(it.el); });
  }
  // "show all columns": the checkbox names the table whose extra columns it reveals.
  Array.prototype.forEach.call(document.querySelectorAll('input[data-toggles]'), function (box) {
    var table = document.getElementById(box.getAttribute('data-toggles'));
    if (!table) return;
    box.addEventListener('change', function () { table.classList.toggle('compact', !box.checked); });
  });
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.tabIndex = 0;
      th.addEventListener('click', function () { sort(table, th, col); });
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(table, th, col); } });
    });
  });
})();
`;

/**
 * Draws every chart listed in #durolab-charts with vega-embed. The views are kept on
 * window.durolabViews and window.durolabReady settles when all charts are drawn, so a
 * headless browser (and a curious reader in devtools) can inspect them.
 */
export const CHARTS_JS = `
(function () {
  var charts = JSON.parse(document.getElementById('durolab-charts').textContent);
  window.durolabViews = {};
  window.durolabReady = Promise.all(charts.map(function (c) {
    var el = document.getElementById(c.id);
    return vegaEmbed(el, c.spec, {
      renderer: 'svg',
      actions: { export: true, source: false, compiled: false, editor: false },
    }).then(function (result) {
      window.durolabViews[c.id] = result.view;
    }).catch(function (err) {
      console.error('durolab chart ' + c.id + ': ' + (err && err.message ? err.message : err));
      el.innerHTML = '';
      var p = document.createElement('p');
      p.className = 'chart-error';
      p.textContent = 'This chart failed to draw: ' + (err && err.message ? err.message : err);
      el.appendChild(p);
    });
  })).then(function () { document.body.setAttribute('data-charts', 'drawn'); });
})();
`;

/** No network at all: a report must open offline, and anything that tries to fetch shows up as an error. */
const CSP =
  "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:";

/**
 * The top of every report page up to and including <head>'s end: charset, the CSP, viewport,
 * optional extra <meta> lines (already HTML), the title (already escaped) and the page CSS.
 */
export function pageHead(titleHtml: string, extraMeta = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
${extraMeta}<title>${titleHtml}</title>
<style>${PAGE_CSS}</style>
</head>`;
}
