// The page of a run, live or in a report: show(state) draws a snapshot of the run (its
// counters, series, micro-batches, skipped elements) and adds its outputs to the table.
// Rows are kept (at most KEEP) and filtered in the page; a row whose output has a
// provenance record (run --provenance) opens, on a click, its derivation tree.
"use strict";
const KEEP = 2000;
const rows = [];
const opened = new Set();
const names = new Set();
const $ = (id) => document.getElementById(id);

function chart(target, series) {
  return new uPlot({ width: 520, height: 220, scales: { x: { time: false } },
                     axes: [{ label: "seconds into the run" }, {}], series: [{}, ...series] },
                   [[], ...series.map(() => [])], $(target));
}
const throughput = chart("throughput", [{ label: "elements/s", stroke: "#1f77b4" }, { label: "outputs/s", stroke: "#d62728" }]);
const latency = chart("latency", [{ label: "p50", stroke: "#2ca02c" }, { label: "p99", stroke: "#9467bd" }]);
const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

// A chart whose series are named by the data (phases, kinds of state): made again when a
// new name appears, then fed [seconds, one array per name].
const named = {};
function namedChart(target, seconds, valueOf) {
  const names = [...new Set(seconds.flatMap((b) => Object.keys(valueOf(b) || {})))];
  $(target + "-box").hidden = names.length === 0;
  if (names.length === 0) return;
  let c = named[target];
  if (!c || c.names.join("\n") !== names.join("\n")) {
    if (c) c.chart.destroy();
    c = named[target] = { names, chart: chart(target, names.map((label, i) => ({ label, stroke: COLOURS[i % COLOURS.length] }))) };
  }
  c.chart.setData([seconds.map((b) => b.second), ...names.map((n) => seconds.map((b) => {
    const v = (valueOf(b) || {})[n];
    return v == null ? null : (typeof v === "object" ? v.p99_ms : v);
  }))]);
}

function bytes(n) { return n == null ? "?" : (n / 1048576).toFixed(0) + " MB"; }

function show(state) {
  $("program").textContent = `${state.program} (${state.runner})`;
  $("status").textContent = state.finished ? `finished: ${state.finished}` :
    `running for ${state.elapsed_s.toFixed(1)} s, stream time ${state.stream_time ?? "–"}`;
  const counters = { ...state.counters, "elements/s": Math.round(state.rates.elements),
                     "outputs/s": Math.round(state.rates.outputs), memory: bytes(state.rss_bytes), ...(state.held || {}) };
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
  namedChart("phases", s, (b) => b.phases);
  namedChart("held", s.filter((b) => b.held && Object.keys(b.held).length), (b) => b.held);
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
  $("late-box").hidden = !state.late || state.late.length === 0;
  $("late").replaceChildren(...(state.late || []).map((p) => Object.assign(document.createElement("li"), { textContent: p })));
  for (const o of state.outputs) {
    rows.push(o);
    if (!names.has(o.name)) {
      names.add(o.name);
      $("name").append(new Option(o.name || "(unnamed)", o.name));
    }
  }
  rows.splice(0, Math.max(0, rows.length - KEEP));
  $("why-hint").hidden = rows.some((o) => o.why);
  render();
}

function render() {
  const name = $("name").value, from = $("from").value, to = $("to").value;
  const shown = rows.filter((o) => (!name || o.name === name) && (from === "" || o.time >= +from) && (to === "" || o.time <= +to));
  $("shown").textContent = `(${shown.length} shown of the last ${rows.length})`;
  $("outputs").tBodies[0].replaceChildren(...shown.slice(-200).reverse().flatMap((o) => {
    const tr = document.createElement("tr");
    tr.className = "output";
    for (const [value, cls] of [[o.time, ""], [o.name, ""], [o.latency_ms ?? "", ""], [o.text, "text"]]) {
      const td = document.createElement("td");
      td.textContent = value;
      td.className = cls;
      tr.append(td);
    }
    if (!o.why) return [tr];
    tr.classList.add("explained");
    tr.title = "why: click to open its derivation";
    tr.onclick = () => { opened.has(o.seq) ? opened.delete(o.seq) : opened.add(o.seq); render(); };
    if (!opened.has(o.seq)) return [tr];
    tr.classList.add("open");
    const detail = document.createElement("tr");
    detail.className = "why";
    const td = document.createElement("td");
    td.colSpan = 4;
    td.append(why(o.why));
    detail.append(td);
    return [tr, detail];
  }));
}

// A provenance record (docs/formats.md) as nested lists: the events the rule combined,
// the facts each matched, and where each fact came from, down to input and background.
function item(...parts) {
  const li = document.createElement("li");
  li.append(...parts);
  return li;
}
function text(content, cls) { return Object.assign(document.createElement("span"), { textContent: content, className: cls }); }
function ul(items) {
  const u = document.createElement("ul");
  u.className = "why";
  u.append(...items);
  return u;
}
function fact(f) {
  const window = f.window ? ` in window ${f.window}` : "";
  const origin = f.from === "input" ? `input${window}: ${f.elements.map((e) => `${e.stream ? `<${e.stream}>` : "the stream"} at ${e.time}`).join(", ")}`
    : f.from === "rule" ? `rule ${f.rule}${window}` : f.from === "background" ? "background" : (f.note || f.from);
  const li = item(text(f.fact, "fact"), text(`  [${origin}]`, `origin ${f.from}`));
  if (f.premises) li.append(ul([...f.premises.map(fact), ...(f.absent || []).map((a) => item(text(`not ${a}`, "fact")))]));
  return li;
}
function event(e) {
  const alias = e.alias && e.alias !== e.type ? `${e.alias}: ` : "";
  if (e.same_as) return item(text(`${e.type} at ${e.time}`, "event"), ` (the ${e.same_as} above)`);
  if (e.rule) return item(text(`${alias}${e.type} at ${e.time}`, "event"), ` detected by <${e.rule}> (${e.at})`, composite(e));
  if (!e.query) return item(text(`${alias}${e.type} at ${e.time}`, "event"), ` ${e.note || ""}`);
  const bindings = Object.entries(e.bindings).map(([k, v]) => `?${k}=${v}`).join(" ");
  return item(text(`${alias}${e.type} at ${e.time}`, "event"), ` EVENT ${e.query} (${e.at}): ${bindings}`, ul(e.facts.map(fact)));
}
function composite(r) {
  return ul([...r.events.map(event),
    ...(r.aggregates || []).map((a) => item(text(`${a.name} over ${a.events.length} event(s)`, "event"), ul(a.events.map(event)))),
    ...(r.absent || []).map((alias) => item(text(`no ${alias} event in its scope`, "event")))]);
}
function solutions(r) {
  return ul(r.solutions.map((s) => {
    const bindings = Object.entries(s.bindings).map(([k, v]) => `?${k}=${v}`).join(" ");
    const interval = s.start !== undefined ? ` over [${s.start}, ${s.end}]` : "";
    return item(text(`solution${interval} ${bindings}`, "event"), ul(s.facts.map(fact)));
  }));
}
function why(record) {
  const box = document.createElement("div");
  box.className = "why";
  if (record.atoms) {
    box.append(text(`the atoms that hold (${record.at}), because:`, "event"), ul(record.atoms.map(fact)));
  } else if (record.solutions) {
    box.append(text(`query ${record.query} (${record.at})${record.note ? `: ${record.note}` : ""}, because:`, "event"), solutions(record));
  } else {
    box.append(text(`rule <${record.rule}> (${record.at}), firing ${record.firing}, because:`, "event"), composite(record));
  }
  return box;
}
