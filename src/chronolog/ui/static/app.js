// The live view: one EventSource on /api/events; each message is the run's snapshot with
// the outputs not seen yet (view.js draws it).
"use strict";
$("filters").addEventListener("input", render);
const source = new EventSource("/api/events");
source.onmessage = (event) => {
  const state = JSON.parse(event.data);
  show(state);
  if (state.finished) source.close();
};
source.onerror = () => { $("status").textContent += " (disconnected: the run has ended)"; source.close(); };
