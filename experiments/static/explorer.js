/* coexplore study explorer: renders the view that experiments/report.py builds.
 * The charts are plotly figures made in Python (handed to Plotly.react as they are);
 * this script runs the trial table, the selection and the breakdown bars, and in the
 * dashboard polls the server for a new view whenever trials change. */
(function () {
  "use strict";
  const CONFIG = JSON.parse(document.getElementById("coexplore-config").textContent);
  const EMBEDDED = JSON.parse(document.getElementById("coexplore-data").textContent);
  const LIVE = CONFIG.mode === "live";
  const PLOT_CONFIG = { responsive: true, displaylogo: false };
  const SMALL_CONFIG = { responsive: true, displayModeBar: false };
  const A_COLOR = "#1f77b4", B_COLOR = "#ff7f0e", SEL_COLOR = "#e8175d";
  const FIGURES = ["pareto", "history", "parallel", "importance", "slice"];
  const LEVEL_COLORS = ["#4c78a8", "#72b7b2", "#54a24b", "#eeca3b", "#f58518", "#e45756", "#b279a2", "#9d755d"];

  const state = {
    view: null, study: CONFIG.study || null, marker: "", sel: [], sortCol: 0, sortDir: 1,
    page: 0, pageSize: 50, filter: "", status: "", details: {}, rowsByNumber: new Map(),
    bound: new Set(), figs: {},
  };
  // read by the browser tests: how often the page rendered a view, and its summary
  const probe = { renders: 0, detailRenders: 0, markRenders: 0, lastError: null, state: state };
  window.coexplore = probe;
  probe.formatValue = (v, unit) => formatValue(v, unit);
  probe.axisTicks = (values, log, unit) => axisTicks(values, log, unit);

  const $ = (id) => document.getElementById(id);
  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  // numbers with their units: the same rules as experiments/units.py (format_value)
  const MICRO = "\u00b5";
  const PREFIXES = [[1e-15, "f"], [1e-12, "p"], [1e-9, "n"], [1e-6, MICRO], [1e-3, "m"], [1, ""],
                    [1e3, "k"], [1e6, "M"], [1e9, "G"]];
  const COUNT = [[1e12, "T"], [1e9, "G"], [1e6, "M"]];
  function strip(text) { return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text; }
  function sig(x, digits) {
    digits = digits || 4;
    if (x === 0) return "0";
    const ax = Math.abs(x);
    if (ax >= 1e6 || ax < 1e-4) {
      const [m, e] = x.toExponential(digits - 1).split("e");
      return strip(m) + "e" + String(parseInt(e, 10));
    }
    const e = Math.floor(Math.log10(ax));
    if (e >= digits) {
      const q = Math.pow(10, e - digits + 1);
      return String(Math.round(x / q) * q);
    }
    return strip(x.toFixed(Math.max(digits - 1 - e, 0)));
  }
  function formatValue(v, unit) {
    if (v === null || v === undefined) return "";
    if (typeof v !== "number") return Array.isArray(v) ? v.join(">") : String(v);
    if (!isFinite(v)) return "n/a";
    if (!unit) return Number.isInteger(v) && Math.abs(v) < 1e15 ? String(v) : sig(v);
    if (unit.kind === "percent") return sig(100 * v, 3) + " %";
    if (unit.kind === "si" && v !== 0) {
      const base = v * unit.scale;
      for (let i = PREFIXES.length - 1; i >= 0; i--) {
        const [f, p] = PREFIXES[i];
        if (Math.abs(base) >= f * (1 - 5e-5)) return sig(base / f) + " " + p + unit.base;
      }
      return sig(base / PREFIXES[0][0]) + " " + PREFIXES[0][1] + unit.base;
    }
    if (unit.kind === "count") {
      for (const [f, p] of COUNT) if (Math.abs(v) >= f) return sig(v / f) + p + " " + unit.symbol;
      return (Number.isInteger(v) ? String(v) : sig(v)) + " " + unit.symbol;
    }
    return sig(v) + " " + unit.symbol;
  }
  // tick values and labels as experiments/units.py's axis_ticks: 1-2-5 per decade on a
  // log axis (decades only past six), about five round steps on a linear one
  function niceStep(span) {
    const raw = span / 5, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * mag) return m * mag;
    return 10 * mag;
  }
  function axisTicks(values, log, unit) {
    let x = values.filter((v) => typeof v === "number" && isFinite(v));
    if (log) x = x.filter((v) => v > 0);
    if (!x.length) return { tickvals: [], ticktext: [] };
    const lo = Math.min(...x), hi = Math.max(...x);
    let ticks = [];
    if (log) {
      const e0 = Math.floor(Math.log10(lo)), e1 = Math.ceil(Math.log10(hi));
      const mults = e1 - e0 > 6 ? [1] : [1, 2, 5];
      for (let e = e0; e <= e1; e++) for (const m of mults) ticks.push(m * Math.pow(10, e));
      ticks = ticks.filter((t) => lo / 1.0001 <= t && t <= hi * 1.0001);
      if (ticks.length < 2) ticks = hi > lo ? [lo, hi] : [lo];
    } else if (hi === lo) {
      ticks = [lo];
    } else {
      const step = niceStep(hi - lo), start = Math.ceil(lo / step - 1e-9) * step;
      for (let i = 0; start + i * step <= hi + 1e-9 * step; i++) ticks.push(start + i * step);
    }
    return { tickvals: ticks, ticktext: ticks.map((t) => formatValue(t, unit)) };
  }
  function unitOf(name) {
    const u = state.view && state.view.table && state.view.table.units;
    return (u && u[name]) || null;
  }
  function fmt(v, name) {
    return formatValue(v, name === undefined ? null : unitOf(name));
  }
  function spansDecade(values) {
    const v = values.filter((x) => typeof x === "number" && isFinite(x));
    return v.length > 0 && v.every((x) => x > 0) && Math.max(...v) / Math.min(...v) > 10;
  }

  // ---------------------------------------------------------------- summary
  function renderSummary(view) {
    const s = view.summary;
    $("study-name").textContent = s.name;
    document.title = "coexplore: " + s.name;
    const objs = s.objectives.map((o) => `${esc(o.name)} (${o.direction})`).join(", ");
    const rep = s.report_objectives.map((o) => esc(o.name)).join(", ");
    const counts = Object.entries(s.counts).filter(([, n]) => n > 0)
      .map(([k, n]) => `<span class="${esc(k)}">${n} ${esc(k.toLowerCase())}</span>`).join(", ");
    $("summary").innerHTML = `<div class="kv">
      <div><span>objectives</span>${objs}</div>
      ${rep !== s.objectives.map((o) => esc(o.name)).join(", ") ? `<div><span>Pareto front of</span>${rep}</div>` : ""}
      <div><span>optimizer</span>${esc(s.optimizer)}</div><div><span>seed</span>${esc(s.seed)}</div>
      <div class="counts"><span>trials</span><b id="n-trials">${s.n_trials}</b> (${counts || "none yet"})</div>
      <div><span>storage</span>${esc(s.storage)}</div><div><span>created</span>${esc(s.created_at)}</div>
      ${s.git_revision ? `<div><span>git</span>${esc(String(s.git_revision).slice(0, 12))}</div>` : ""}
    </div>`;
    $("footer").textContent = (LIVE ? "live view, last update " : "report generated ") + s.generated_at +
      " by coexplore" + (s.config_file ? " from " + s.config_file : "");
  }

  // ---------------------------------------------------------------- figures
  function renderFigure(name, fig, note) {
    const div = $("fig-" + name);
    $("note-" + name).textContent = note || "";
    if (!fig) {
      delete state.figs[name];
      if (div.data) Plotly.purge(div);
      div.innerHTML = "";
      div.style.minHeight = "0";
      return;
    }
    div.style.minHeight = "";
    state.figs[name] = fig;
    drawFigure(name);
    if (!state.bound.has(name) && div.on) {
      state.bound.add(name);
      div.on("plotly_click", (ev) => {
        const p = ev && ev.points && ev.points[0];
        if (p && p.customdata !== undefined && p.customdata !== null) {
          select(Number(p.customdata), ev.event && ev.event.shiftKey);
        }
      });
    }
  }

  // the selected designs, marked on every chart of designs: a star on the scatter plots
  // (where the figure's layout.meta.coexplore_marks says which columns each panel plots),
  // the reserved top colour of the parallel coordinates, drawn last (on top)
  function cell(number, column) {
    const t = state.view.table, r = state.rowsByNumber.get(number);
    if (!r) return undefined;
    if (column === "number") return number;
    const i = t.columns.indexOf(column);
    return i < 0 ? undefined : r[i];
  }
  function markTraces(marks) {
    const out = [];
    state.sel.forEach((n, k) => {
      marks.forEach((m, j) => {
        const x = cell(n, m.x), y = cell(n, m.y);
        if (x === undefined || x === null || y === undefined || y === null) return;
        out.push({ type: "scatter", mode: "markers", x: [x], y: [y], xaxis: m.xaxis, yaxis: m.yaxis,
          name: (k ? "B" : "selected") + " (trial " + n + ")", legendgroup: "sel" + k, showlegend: j === 0,
          marker: { symbol: "star", size: 17, color: k ? B_COLOR : SEL_COLOR, line: { color: "#1d2330", width: 1 } },
          hoverinfo: "skip", meta: "coexplore-selected" });
      });
    });
    return out;
  }
  function parallelData(fig) {
    const par = fig.layout.meta && fig.layout.meta.coexplore_parallel;
    const trace = fig.data[0];
    if (!par || !state.sel.length) return fig.data;
    const at = par.numbers.indexOf(state.sel[0]);
    if (at < 0) return fig.data;
    const order = par.numbers.map((_, i) => i).filter((i) => i !== at).concat([at]);
    const color = order.map((i) => (i === at ? par.selected_value : trace.line.color[i]));
    const dims = trace.dimensions.map((d) => Object.assign({}, d, { values: order.map((i) => d.values[i]) }));
    return [Object.assign({}, trace, { dimensions: dims, line: Object.assign({}, trace.line, { color }) })];
  }
  function drawFigure(name) {
    const fig = state.figs[name];
    if (!fig) return;
    const meta = fig.layout.meta || {};
    let data = fig.data;
    if (meta.coexplore_marks) data = fig.data.concat(markTraces(meta.coexplore_marks));
    else if (meta.coexplore_parallel) data = parallelData(fig);
    Plotly.react($("fig-" + name), data, fig.layout, PLOT_CONFIG);
  }
  function drawMarks() {
    for (const name of FIGURES) drawFigure(name);
    probe.markRenders++;
  }

  // ---------------------------------------------------------------- table
  function parseFilter(text, columns) {
    const conds = [], words = [];
    for (const tok of text.trim().split(/\s+/).filter(Boolean)) {
      const m = tok.match(/^([^<>=!]+?)(<=|>=|!=|=|<|>)(.+)$/);
      const col = m ? columns.indexOf(m[1]) : -1;
      if (m && col >= 0) conds.push({ col, op: m[2], value: m[3] });
      else words.push(tok.toLowerCase());
    }
    return { conds, words };
  }
  function test(cell, op, value) {
    const num = Number(value);
    if (typeof cell === "number" && !Number.isNaN(num)) {
      switch (op) {
        case "<": return cell < num; case ">": return cell > num;
        case "<=": return cell <= num; case ">=": return cell >= num;
        case "=": return cell === num; case "!=": return cell !== num;
      }
    }
    const c = fmt(cell).toLowerCase(), v = value.toLowerCase();
    if (op === "=") return c === v;
    if (op === "!=") return c !== v;
    return false;
  }
  function tableRows() {
    const t = state.view.table;
    const f = parseFilter(state.filter, t.columns);
    const statusCol = t.columns.indexOf("status");
    let rows = t.rows.filter((r) => {
      if (state.status && r[statusCol] !== state.status) return false;
      for (const c of f.conds) if (!test(r[c.col], c.op, c.value)) return false;
      if (f.words.length) {
        const line = r.map((v) => fmt(v)).join(" ").toLowerCase();
        for (const w of f.words) if (!line.includes(w)) return false;
      }
      return true;
    });
    const k = state.sortCol, dir = state.sortDir;
    rows = rows.slice().sort((a, b) => {
      const x = a[k], y = b[k];
      const xn = x === null || x === undefined, yn = y === null || y === undefined;
      if (xn || yn) return xn === yn ? 0 : xn ? 1 : -1;  // missing values last
      if (typeof x === "number" && typeof y === "number") return dir * (x - y);
      return dir * String(x).localeCompare(String(y), undefined, { numeric: true });
    });
    return rows;
  }
  function renderTable() {
    const t = state.view.table;
    const head = $("trials").tHead, body = $("trials").tBodies[0];
    head.innerHTML = "<tr>" + t.columns.map((c, i) =>
      `<th data-col="${i}" data-group="${esc(t.groups[i])}" class="${i === state.sortCol ? (state.sortDir > 0 ? "sorted-asc" : "sorted-desc") : ""}">${esc(c)}</th>`).join("") + "</tr>";
    const rows = tableRows();
    const pages = Math.max(1, Math.ceil(rows.length / state.pageSize));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * state.pageSize;
    const numCol = t.columns.indexOf("number"), statusCol = t.columns.indexOf("status");
    body.innerHTML = rows.slice(start, start + state.pageSize).map((r) => {
      const n = r[numCol];
      const cls = state.sel[0] === n ? "sel-a" : state.sel[1] === n ? "sel-b" : "";
      return `<tr data-number="${n}" class="${cls}">` + r.map((v, i) =>
        `<td class="${t.kinds[i] === "text" ? "text" : ""}${i === statusCol ? " status-" + esc(v) : ""}" title="${esc(fmt(v))}">${esc(fmt(v, t.columns[i]))}</td>`).join("") + "</tr>";
    }).join("");
    $("table-count").textContent = `${rows.length} of ${t.rows.length} trials`;
    $("page-info").textContent = ` page ${state.page + 1} / ${pages} `;
  }
  function bindTable() {
    $("trials").tHead.addEventListener("click", (ev) => {
      const th = ev.target.closest("th");
      if (!th) return;
      const col = Number(th.dataset.col);
      state.sortDir = state.sortCol === col ? -state.sortDir : 1;
      state.sortCol = col;
      renderTable();
    });
    $("trials").tBodies[0].addEventListener("click", (ev) => {
      const tr = ev.target.closest("tr");
      if (tr) select(Number(tr.dataset.number), ev.shiftKey);
    });
    $("table-filter").addEventListener("input", (ev) => { state.filter = ev.target.value; state.page = 0; renderTable(); });
    $("table-status").addEventListener("change", (ev) => { state.status = ev.target.value; state.page = 0; renderTable(); });
    $("page-prev").addEventListener("click", () => { state.page = Math.max(0, state.page - 1); renderTable(); });
    $("page-next").addEventListener("click", () => { state.page += 1; renderTable(); });
  }
  function renderStatusOptions() {
    const sel = $("table-status");
    const have = Object.entries(state.view.summary.counts).filter(([, n]) => n > 0).map(([k]) => k);
    const current = Array.from(sel.options).map((o) => o.value).filter(Boolean);
    if (have.join() === current.join()) return;
    sel.innerHTML = '<option value="">every status</option>' +
      have.map((k) => `<option value="${esc(k)}"${k === state.status ? " selected" : ""}>${esc(k)}</option>`).join("");
  }

  // ---------------------------------------------------------------- selection and details
  function select(number, add) {
    if (!state.rowsByNumber.has(number)) return;
    if (add && state.sel.length && state.sel[0] !== number) state.sel = [state.sel[0], number];
    else state.sel = [number];
    renderTable();
    drawMarks();
    renderDetail();
  }
  function detailFromRow(number) {
    const t = state.view.table, r = state.rowsByNumber.get(number);
    const d = { number, params: {}, metrics: {}, status: null, reason: null, breakdown: null,
                breakdown_error: null, partial: !LIVE };
    t.columns.forEach((c, i) => {
      const g = t.groups[i];
      if (c === "status") d.status = r[i];
      else if (c === "reason") d.reason = r[i];
      else if (g === "param") d.params[c] = r[i];
      else if (g === "objective" || g === "metric" || g === "constraint") d.metrics[c] = r[i];
    });
    return d;
  }
  async function getDetail(number) {
    const key = state.study + "/" + number;
    if (state.details[key]) return state.details[key];
    let d = null;
    if (LIVE) {
      const res = await fetch(`api/trial?study=${encodeURIComponent(state.study)}&number=${number}`);
      if (res.ok) d = await res.json();
    } else if (state.view.details && state.view.details[String(number)]) {
      d = state.view.details[String(number)];
    }
    if (!d) d = detailFromRow(number);
    else state.details[key] = d;
    return d;
  }
  function kvTable(title, rowsA, rowsB, ratio) {
    const keys = Array.from(new Set([...Object.keys(rowsA), ...Object.keys(rowsB || {})]));
    const two = rowsB !== null;
    let h = `<table><thead><tr><th>${esc(title)}</th><th><span class="tag a">A</span></th>` +
      (two ? `<th><span class="tag b">B</span></th>` + (ratio ? "<th>B / A</th>" : "") : "") + "</tr></thead><tbody>";
    for (const k of keys) {
      const a = rowsA[k], b = two ? rowsB[k] : undefined;
      const differ = two && fmt(a) !== fmt(b);
      h += `<tr><td>${esc(k)}</td><td class="${differ ? "diff" : ""}">${esc(fmt(a, k))}</td>`;
      if (two) {
        h += `<td class="${differ ? "diff" : ""}">${esc(fmt(b, k))}</td>`;
        if (ratio) h += `<td>${typeof a === "number" && typeof b === "number" && a !== 0 ? esc(sig(b / a, 3)) + "\u00d7" : ""}</td>`;
      }
      h += "</tr>";
    }
    return h + "</tbody></table>";
  }
  async function renderDetail() {
    if (!state.sel.length) {
      $("detail").hidden = true; $("detail-empty").hidden = false; return;
    }
    const ds = await Promise.all(state.sel.map(getDetail));
    $("detail").hidden = false; $("detail-empty").hidden = true;
    const [a, b] = [ds[0], ds[1] || null];
    const head = (d, tag) => `<p><span class="tag ${tag}">${tag.toUpperCase()}</span> trial <b>${d.number}</b> ` +
      `${esc(d.status || "")}${d.reason ? " &mdash; " + esc(d.reason) : ""}</p>`;
    $("detail-tables").innerHTML = head(a, "a") + (b ? head(b, "b") : "") +
      `<div class="detail-grid"><div>${kvTable("parameter", a.params, b ? b.params : null, false)}</div>` +
      `<div>${kvTable("metric", a.metrics, b ? b.metrics : null, true)}</div></div>`;
    const with_bd = ds.filter((d) => d.breakdown);
    const notes = ds.filter((d) => !d.breakdown).map((d) => {
      if (d.breakdown_error) return `trial ${d.number}: breakdown not shown (${d.breakdown_error})`;
      if (d.status && d.status !== "COMPLETE") return `trial ${d.number}: no breakdown (${d.status.toLowerCase()})`;
      if (d.partial && state.view.has_breakdowns) return `trial ${d.number}: its breakdown is not embedded in this report ` +
        `(it holds those of the Pareto front and the ${state.view.details_limit || 0} best designs); ` +
        "`coexplore dashboard` shows any design's";
      return `trial ${d.number}: the evaluator gives no breakdown (Evaluation.info["breakdown"])`;
    });
    $("breakdown-note").textContent = notes.join("; ");
    renderMappings(ds);
    if (!with_bd.length) { $("breakdown").hidden = true; probe.detailRenders++; return; }
    $("breakdown").hidden = false;
    renderBreakdown(ds.map((d, i) => ({ d, label: (i ? "B" : "A") + " #" + d.number, color: i ? B_COLOR : A_COLOR }))
      .filter((x) => x.d.breakdown));
    probe.detailRenders++;
  }

  function renderMappings(ds) {
    const el = $("mappings");
    const parts = ds.map((d, i) => {
      const tag = i ? "b" : "a";
      if (d.mappings_error) return `<p class="note">trial ${d.number}: mappings not shown (${esc(d.mappings_error)})</p>`;
      if (!d.mappings) return "";
      return `<div class="mapping-design"><p><span class="tag ${tag}">${tag.toUpperCase()}</span> trial <b>${d.number}</b>: ` +
        `${d.mappings.length} distinct mapping${d.mappings.length > 1 ? "s" : ""} (loop nests, outermost first; ` +
        "<code>coexplore show STORAGE " + d.number + " --format timeloop</code> exports them)</p>" +
        d.mappings.map((m, j) => `<details${j === 0 ? " open" : ""}><summary>${m.layers.map(esc).join(", ")}</summary>` +
          `<pre class="loopnest">${esc(m.text)}</pre></details>`).join("") + "</div>";
    }).join("");
    el.innerHTML = parts;
    el.hidden = !parts;
  }

  // ---------------------------------------------------------------- breakdown bars
  function barLayout(title, extra) {
    return Object.assign({
      template: "plotly_white", title: { text: title, font: { size: 14 } }, height: 330,
      margin: { l: 70, r: 20, t: 45, b: 70 }, legend: { orientation: "h", y: -0.25 },
      barmode: "group",
    }, extra || {});
  }
  function energyScale(items) {
    // one prefix for the whole chart, chosen by its largest layer energy (pJ in the data)
    let top = 0;
    for (const it of items) for (const v of it.d.breakdown.energy_pj) if (typeof v === "number" && isFinite(v)) top = Math.max(top, Math.abs(v));
    let f = 1, p = "p";
    for (const [s, name] of [[1e12, ""], [1e9, "m"], [1e6, MICRO], [1e3, "n"]]) if (top >= s) { f = s; p = name; break; }
    return { f, label: p + "J" };
  }
  function renderBreakdown(items) {
    const es = energyScale(items);
    const uj = (x) => (x === null || x === undefined ? null : x / es.f);
    const EU = { kind: "si", base: "J", scale: 1e-12 };
    const levels = Array.from(new Set(items.flatMap((it) => it.d.breakdown.levels)));
    // energy by layer, stacked by memory level; two designs side by side within a layer
    const two = items.length > 1;
    const energyTraces = levels.map((lv, li) => {
      const x0 = [], x1 = [], y = [], text = [];
      for (const it of items) {
        const bd = it.d.breakdown;
        bd.layers.forEach((name, i) => {
          x0.push(name); x1.push(it.label);
          const v = (bd.energy_by_level_pj[lv] || [])[i];
          y.push(uj(v));
          text.push(`${esc(it.label)} ${esc(name)} &times;${bd.repeat[i]}<br>${esc(lv)}: ${esc(formatValue(v, EU))}`);
        });
      }
      return { type: "bar", name: lv, x: two ? [x0, x1] : x0, y, hovertext: text, hoverinfo: "text",
               marker: { color: LEVEL_COLORS[li % LEVEL_COLORS.length] } };
    });
    Plotly.react($("fig-bd-energy"), energyTraces,
      barLayout("energy by layer and level (network, layer x repeat), " + es.label, { barmode: "stack", height: 380 }), SMALL_CONFIG);
    const perDesign = (fn, kind) => items.map((it) => Object.assign({ type: "bar", name: it.label, marker: { color: it.color } }, fn(it.d.breakdown)));
    Plotly.react($("fig-bd-levels"), perDesign((bd) => ({
      x: bd.levels, y: bd.levels.map((lv) => uj(bd.totals.energy_by_level_pj[lv])),
    })), barLayout("energy per level (network), " + es.label), SMALL_CONFIG);
    const CYCLES = { kind: "count", symbol: "cycles" };
    const lat = perDesign((bd) => ({ x: bd.layers, y: bd.latency_cycles,
      hovertext: bd.latency_cycles.map((v) => formatValue(v, CYCLES)), hoverinfo: "x+text" }));
    const latY = lat.flatMap((t) => t.y), latLog = spansDecade(latY);
    Plotly.react($("fig-bd-latency"), lat, barLayout("latency by layer (x repeat), cycles",
      { yaxis: Object.assign({ type: latLog ? "log" : "linear", tickmode: "array", automargin: true },
                             axisTicks(latLog ? latY : latY.concat([0]), latLog, CYCLES)) }), SMALL_CONFIG);
    Plotly.react($("fig-bd-util"), perDesign((bd) => ({
      x: bd.layers, y: bd.utilization,
      hovertemplate: "%{x}: %{y:.1%}<extra>" + "</extra>",
    })), barLayout("PE utilization by layer, in its compute cycles (latency-weighted: " +
      items.map((it) => `${it.label} ${(100 * it.d.breakdown.totals.utilization).toFixed(1)} %`).join(", ") + ")",
      { yaxis: { range: [0, 1], tickformat: ".0%" } }), SMALL_CONFIG);
  }

  // ---------------------------------------------------------------- the whole view
  function render(view) {
    state.view = view;
    const t = view.table, numCol = t.columns.indexOf("number");
    state.rowsByNumber = new Map(t.rows.map((r) => [r[numCol], r]));
    state.sel = state.sel.filter((n) => state.rowsByNumber.has(n));
    renderSummary(view);
    if (!state.sel.length) {
      if (view.selected !== null && view.selected !== undefined) state.sel = [view.selected];
      else if (view.highlights && view.highlights.length) state.sel = [view.highlights[0]];
    }
    for (const name of FIGURES) renderFigure(name, view.figures[name], view.notes[name]);
    probe.markRenders++;
    renderStatusOptions();
    renderTable();
    renderDetail();
    probe.renders++;
  }

  // ---------------------------------------------------------------- live mode
  function setLive(text, ok) {
    const el = $("live-status");
    el.hidden = false; el.textContent = text; el.className = "live " + (ok ? "ok" : "err");
  }
  async function loadStudies() {
    const res = await fetch("api/studies");
    const studies = await res.json();
    const names = studies.map((s) => s.name);
    if (!state.study || !names.includes(state.study)) state.study = names[0] || null;
    const picker = $("study-select");
    picker.innerHTML = names.map((n) => `<option${n === state.study ? " selected" : ""}>${esc(n)}</option>`).join("");
    $("study-picker").hidden = names.length < 2;
    return names;
  }
  async function poll() {
    try {
      if (!state.study) {
        await loadStudies();
        if (!state.study) { setLive("no study in this storage yet; waiting", true); return; }
      }
      const res = await fetch(`api/view?study=${encodeURIComponent(state.study)}&since=${encodeURIComponent(state.marker)}`);
      if (!res.ok) throw new Error((await res.text()) || res.statusText);
      const msg = await res.json();
      if (msg.view) {
        state.marker = msg.marker;
        state.details = {};
        render(msg.view);
      }
      setLive(`live \u00B7 ${state.view ? state.view.summary.n_trials : 0} trials \u00B7 checked ${new Date().toLocaleTimeString()}`, true);
    } catch (err) {
      probe.lastError = String(err);
      setLive("lost the dashboard server (" + err + "); retrying", false);
    } finally {
      setTimeout(poll, CONFIG.poll_ms || 2000);
    }
  }

  bindTable();
  if (LIVE) {
    $("study-select").addEventListener("change", (ev) => {
      state.study = ev.target.value; state.marker = ""; state.sel = []; state.details = {};
    });
    loadStudies().catch(() => null).finally(poll);
  } else if (EMBEDDED) {
    render(EMBEDDED);
  }
})();
