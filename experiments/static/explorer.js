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
  const A_COLOR = "#1f77b4", B_COLOR = "#ff7f0e";
  const LEVEL_COLORS = ["#4c78a8", "#72b7b2", "#54a24b", "#eeca3b", "#f58518", "#e45756", "#b279a2", "#9d755d"];

  const state = {
    view: null, study: CONFIG.study || null, marker: "", sel: [], sortCol: 0, sortDir: 1,
    page: 0, pageSize: 50, filter: "", status: "", details: {}, rowsByNumber: new Map(),
    bound: new Set(),
  };
  // read by the browser tests: how often the page rendered a view, and its summary
  const probe = { renders: 0, detailRenders: 0, lastError: null, state: state };
  window.coexplore = probe;

  const $ = (id) => document.getElementById(id);
  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  function fmt(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") {
      if (!isFinite(v)) return "n/a";
      if (Number.isInteger(v) && Math.abs(v) < 1e7) return String(v);
      return Number(v.toPrecision(4)).toString();
    }
    if (Array.isArray(v)) return v.join(">");
    return String(v);
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
      if (div.data) Plotly.purge(div);
      div.innerHTML = "";
      div.style.minHeight = "0";
      return;
    }
    div.style.minHeight = "";
    Plotly.react(div, fig.data, fig.layout, PLOT_CONFIG);
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
        const line = r.map(fmt).join(" ").toLowerCase();
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
      `<th data-col="${i}" class="${i === state.sortCol ? (state.sortDir > 0 ? "sorted-asc" : "sorted-desc") : ""}">${esc(c)}</th>`).join("") + "</tr>";
    const rows = tableRows();
    const pages = Math.max(1, Math.ceil(rows.length / state.pageSize));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * state.pageSize;
    const numCol = t.columns.indexOf("number"), statusCol = t.columns.indexOf("status");
    body.innerHTML = rows.slice(start, start + state.pageSize).map((r) => {
      const n = r[numCol];
      const cls = state.sel[0] === n ? "sel-a" : state.sel[1] === n ? "sel-b" : "";
      return `<tr data-number="${n}" class="${cls}">` + r.map((v, i) =>
        `<td class="${t.kinds[i] === "text" ? "text" : ""}${i === statusCol ? " status-" + esc(v) : ""}" title="${esc(fmt(v))}">${esc(fmt(v))}</td>`).join("") + "</tr>";
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
      h += `<tr><td>${esc(k)}</td><td class="${differ ? "diff" : ""}">${esc(fmt(a))}</td>`;
      if (two) {
        h += `<td class="${differ ? "diff" : ""}">${esc(fmt(b))}</td>`;
        if (ratio) h += `<td>${typeof a === "number" && typeof b === "number" && a !== 0 ? esc(fmt(b / a)) : ""}</td>`;
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
    if (!with_bd.length) { $("breakdown").hidden = true; probe.detailRenders++; return; }
    $("breakdown").hidden = false;
    renderBreakdown(ds.map((d, i) => ({ d, label: (i ? "B" : "A") + " #" + d.number, color: i ? B_COLOR : A_COLOR }))
      .filter((x) => x.d.breakdown));
    probe.detailRenders++;
  }

  // ---------------------------------------------------------------- breakdown bars
  function barLayout(title, extra) {
    return Object.assign({
      template: "plotly_white", title: { text: title, font: { size: 14 } }, height: 330,
      margin: { l: 70, r: 20, t: 45, b: 70 }, legend: { orientation: "h", y: -0.25 },
      barmode: "group",
    }, extra || {});
  }
  function renderBreakdown(items) {
    const uj = (x) => (x === null || x === undefined ? null : x / 1e6);
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
          text.push(`${esc(it.label)} ${esc(name)} &times;${bd.repeat[i]}<br>${esc(lv)}: ${fmt(uj(v))} &micro;J`);
        });
      }
      return { type: "bar", name: lv, x: two ? [x0, x1] : x0, y, hovertext: text, hoverinfo: "text",
               marker: { color: LEVEL_COLORS[li % LEVEL_COLORS.length] } };
    });
    Plotly.react($("fig-bd-energy"), energyTraces,
      barLayout("energy by layer and level (network, layer x repeat), \u00B5J", { barmode: "stack", height: 380 }), SMALL_CONFIG);
    const perDesign = (fn, kind) => items.map((it) => Object.assign({ type: "bar", name: it.label, marker: { color: it.color } }, fn(it.d.breakdown)));
    Plotly.react($("fig-bd-levels"), perDesign((bd) => ({
      x: bd.levels, y: bd.levels.map((lv) => uj(bd.totals.energy_by_level_pj[lv])),
    })), barLayout("energy per level (network), \u00B5J"), SMALL_CONFIG);
    const lat = perDesign((bd) => ({ x: bd.layers, y: bd.latency_cycles }));
    Plotly.react($("fig-bd-latency"), lat, barLayout("latency by layer (x repeat), cycles",
      { yaxis: { type: spansDecade(lat.flatMap((t) => t.y)) ? "log" : "linear" } }), SMALL_CONFIG);
    Plotly.react($("fig-bd-util"), perDesign((bd) => ({
      x: bd.layers, y: bd.utilization,
      hovertemplate: "%{x}: %{y:.1%}<extra>" + "</extra>",
    })), barLayout("PE utilization by layer (network: " +
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
    for (const name of ["pareto", "history", "parallel"]) renderFigure(name, view.figures[name], view.notes[name]);
    renderStatusOptions();
    renderTable();
    if (!state.sel.length && view.highlights && view.highlights.length) state.sel = [view.highlights[0]];
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
