// The page of a run, live or in a report: show(state) draws a snapshot of the run (its
// counters, series, micro-batches, skipped elements) and adds its outputs to the table.
// Rows are kept (at most KEEP) and filtered in the page.
"use strict";
const KEEP = 2000;
const rows = [];
const names = new Set();
const $ = (id) => document.getElementById(id);

function chart(target, series) {
  return new uPlot({ width: 520, height: 220, scales: { x: { time: false } },
                     axes: [{ label: "seconds into the run" }, {}], series: [{}, ...series] },
                   [[], ...series.map(() => [])], $(target));
}
const throughput = chart("throughput", [{ label: "elements/s", stroke: "#1f77b4" }, { label: "outputs/s", stroke: "#d62728" }]);
const latency = chart("latency", [{ label: "p50", stroke: "#2ca02c" }, { label: "p99", stroke: "#9467bd" }]);

function bytes(n) { return n == null ? "?" : (n / 1048576).toFixed(0) + " MB"; }

function show(state) {
  $("program").textContent = `${state.program} (${state.runner})`;
  $("status").textContent = state.finished ? `finished: ${state.finished}` :
    `running for ${state.elapsed_s.toFixed(1)} s, stream time ${state.stream_time ?? "–"}`;
  const counters = { ...state.counters, "elements/s": Math.round(state.rates.elements),
                     "outputs/s": Math.round(state.rates.outputs), memory: bytes(state.rss_bytes) };
  $("counters").replaceChildren(...Object.entries(counters).map(([k, v]) => {
    const div = document.createElement("div");
    div.className = "counter";
    div.innerHTML = `<b></b>${k.replace("_", " ")}`;
    div.querySelector("b").textContent = typeof v === "number" ? v.toLocaleString() : v;
    return div;
  }));
  const s = state.seconds;
  throughput.setData([s.map((b) => b.second), s.map((b) => b.elements), s.map((b) => b.outputs)]);
  latency.setData([s.map((b) => b.second), s.map((b) => b.p50_ms), s.map((b) => b.p99_ms)]);
  $("batches-box").hidden = state.batches.length === 0;
  $("batches").tBodies[0].replaceChildren(...state.batches.slice(-30).reverse().map((b) => {
    const tr = document.createElement("tr");
    for (const value of [b.batch, b.duration_ms, b.input_rows, b.input_rate, b.processed_rate, b.state_rows]) {
      const td = document.createElement("td");
      td.textContent = typeof value === "number" ? Math.round(value).toLocaleString() : (value ?? "");
      tr.append(td);
    }
    return tr;
  }));
  $("problems-box").hidden = state.problems.length === 0;
  $("problems").replaceChildren(...state.problems.map((p) => Object.assign(document.createElement("li"), { textContent: p })));
  for (const o of state.outputs) {
    rows.push(o);
    if (!names.has(o.name)) {
      names.add(o.name);
      $("name").append(new Option(o.name || "(unnamed)", o.name));
    }
  }
  rows.splice(0, Math.max(0, rows.length - KEEP));
  render();
}

function render() {
  const name = $("name").value, from = $("from").value, to = $("to").value;
  const shown = rows.filter((o) => (!name || o.name === name) && (from === "" || o.time >= +from) && (to === "" || o.time <= +to));
  $("shown").textContent = `(${shown.length} shown of the last ${rows.length})`;
  $("outputs").tBodies[0].replaceChildren(...shown.slice(-200).reverse().map((o) => {
    const tr = document.createElement("tr");
    tr.className = "output";
    for (const [value, cls] of [[o.time, ""], [o.name, ""], [o.latency_ms ?? "", ""], [o.text, "text"]]) {
      const td = document.createElement("td");
      td.textContent = value;
      td.className = cls;
      tr.append(td);
    }
    return tr;
  }));
}

