// Staff observer (/staff/tables/<id>/): a read-only socket, ws/observe/<id>/, that receives
// the table's public state (never a hand during a round) and redraws seats, line and scores.
const box = document.getElementById("observer");
const status = document.getElementById("observer-status");
let delay = 500;

function text(id, value) { document.getElementById(id).textContent = value; }

function render(state) {
  const seats = document.getElementById("observer-seats");
  seats.replaceChildren(...state.seats.map((s) => {
    const li = document.createElement("li");
    li.textContent = `${s.index} · ${s.name || "—"}${s.connected ? "" : " (away)"}`;
    return li;
  }));
  const moves = (state.view && state.view.moves) || [];
  text("observer-line", moves.filter((m) => m.play).map((m) => m.play).join(" "));
  text("observer-scores", state.match ? state.match.scores.join(" – ") : "");
  status.textContent = `v${state.version} · ${state.table.state}${state.table.closed_reason ? " · " + state.table.closed_reason : ""}`;
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}${box.dataset.socket}`);
  ws.onopen = () => { delay = 500; };
  ws.onmessage = (event) => {
    const msg = JSON.parse(event.data);
    if (msg.type === "state") render(msg.state);
  };
  ws.onclose = (event) => {
    if (event.code >= 4400) { status.textContent = `closed (${event.code})`; return; }
    setTimeout(connect, delay);
    delay = Math.min(delay * 2, 15000);
  };
}

connect();
