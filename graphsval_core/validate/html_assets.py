"""The static parts of ``report.html``: its style sheet and its script (the
record table's sorting and filtering, and the drill-down from a heatmap cell
to its records). Plain CSS and JavaScript, no library, nothing fetched."""

from __future__ import annotations

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;
  line-height:1.4}
main{max-width:1440px;margin:0 auto;padding:1em 2em 4em}
header{background:#f6f8fa;border-bottom:1px solid #ddd;padding:1em 2em}
header h1{margin:0 0 .3em;font-size:1.5em}
.verdict{font-weight:600;font-size:1.1em;padding:.4em .8em;border-radius:4px;display:inline-block}
.verdict.pass{background:#dff0d8;color:#2b542c}.verdict.fail{background:#f2dede;color:#843534}
nav a{margin-right:1em}
h2{border-bottom:1px solid #eee;padding-bottom:.2em;margin-top:1.8em}
table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #d0d7de;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f6f8fa}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.heatmap td.cell{text-align:center;min-width:6.5em;padding:0}
table.heatmap td.cell a{display:block;padding:4px 6px;color:inherit;text-decoration:none}
table.heatmap td.cell a:hover{outline:2px solid #0969da}
table.heatmap td.cell small{display:block;font-size:11px;opacity:.8}
table.heatmap tr.target th{background:#eaeef2;text-align:left}
.ok{background:#d4edda}.fail{background:#f8d7da}.none{color:#999}
.figures{display:flex;flex-wrap:wrap;gap:1em}
figure{margin:0;border:1px solid #eee;padding:.4em;flex:1 1 560px;max-width:680px}
figure img{display:block;width:100%;height:auto}
figcaption{font-size:12px;color:#555;max-width:640px}
.filters{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.6em 0;
  position:sticky;top:0;background:#fff;padding:.4em 0;z-index:1}
.filters input[type=search]{width:18em}
#cell-filter{background:#fff3cd;padding:2px 8px;border-radius:3px}
#record-table th{cursor:pointer;white-space:nowrap;position:sticky;top:2.6em}
#record-table th.asc::after{content:" \\25B2"}#record-table th.desc::after{content:" \\25BC"}
#record-table tr.FAIL td.v{color:#a40e26;font-weight:600}
#record-table tr.pass td.v{color:#1a7f37}
#record-table details{font-size:12px;max-width:46em}
#record-table details dl{display:grid;grid-template-columns:max-content auto;gap:0 1em;
  margin:.3em 0}
#record-table details dt{color:#555}
ul.flagged{max-height:24em;overflow:auto;font-size:13px}
"""

SCRIPT = """
(function () {
  const table = document.getElementById('record-table');
  if (!table) return;
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const count = document.getElementById('record-count');
  const text = document.getElementById('filter-text');
  const selects = Array.from(document.querySelectorAll('.filters select'));
  const cellBox = document.getElementById('cell-filter');
  let cell = '';
  function apply() {
    const q = text.value.trim().toLowerCase();
    let shown = 0;
    for (const r of rows) {
      let ok = !cell || r.dataset.cell === cell;
      for (const s of selects) {
        if (ok && s.value && r.dataset[s.name] !== s.value) ok = false;
      }
      if (ok && q && !r.textContent.toLowerCase().includes(q)) ok = false;
      r.hidden = !ok;
      if (ok) shown += 1;
    }
    count.textContent = shown + ' of ' + rows.length + ' records';
    cellBox.hidden = !cell;
    cellBox.querySelector('span').textContent = cell.split('|').join(' ');
  }
  text.addEventListener('input', apply);
  for (const s of selects) s.addEventListener('change', apply);
  cellBox.querySelector('button').addEventListener('click', function () { cell = ''; apply(); });
  document.querySelectorAll('a[data-cell]').forEach(function (a) {
    a.addEventListener('click', function () {
      cell = a.dataset.cell;
      for (const s of selects) s.value = '';
      text.value = '';
      apply();
    });
  });
  Array.from(table.tHead.rows[0].cells).forEach(function (th, k) {
    th.addEventListener('click', function () {
      const numeric = th.dataset.type === 'num';
      const dir = th.classList.contains('asc') ? -1 : 1;
      for (const other of table.tHead.rows[0].cells) other.classList.remove('asc', 'desc');
      th.classList.add(dir > 0 ? 'asc' : 'desc');
      const key = function (r) {
        const c = r.cells[k];
        const v = c.dataset.v !== undefined ? c.dataset.v : c.textContent;
        return numeric ? (v === '' ? NaN : parseFloat(v)) : v.toLowerCase();
      };
      rows.sort(function (a, b) {
        const x = key(a), y = key(b);
        if (numeric) {
          if (isNaN(x)) return isNaN(y) ? 0 : 1;
          if (isNaN(y)) return -1;
        }
        return x < y ? -dir : x > y ? dir : 0;
      });
      for (const r of rows) body.appendChild(r);
    });
  });
  const fromHash = decodeURIComponent(location.hash.replace(/^#cell=/, ''));
  if (location.hash.startsWith('#cell=')) cell = fromHash;
  apply();
})();
"""
