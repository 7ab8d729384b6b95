// The table page: one socket, one render function. Protocol: docs/protocol.md.
//
// Every "state" message is this seat's whole picture, so rendering never merges anything:
// it replaces. Versions only decide whether to resync: a message whose version jumps by more
// than one (a doorbell was lost) and every reconnect send {"type": "sync"}.

const script = document.getElementById("table-script");
const T = JSON.parse(document.getElementById("table-strings").textContent);
const AVATARS = script.dataset.avatars;
const $ = (id) => document.getElementById(id);
const fmt = (s, params = {}) => s.replace(/%\((\w+)\)s/g, (_m, k) => String(params[k] ?? ""));

let ws = null;
let lastVersion = -1;
let state = null;
let delay = 500;
let finished = false;
let heartbeat = null;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else if (value !== false && value != null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function setStatus(text, kind = "") {
  const box = $("status");
  box.textContent = text;
  box.className = `status ${kind}`;
}

function send(message) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
}

// -- the socket -------------------------------------------------------------------------------

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(`${proto}//${location.host}${script.dataset.socket}`);
  setStatus(T.connecting);
  ws.onopen = () => {
    delay = 500;
    setStatus(T.connected, "ok");
    // The server sends a state on connect; asking again after a reconnect costs one frame.
    if (lastVersion >= 0) send({ type: "sync" });
    clearInterval(heartbeat);
    heartbeat = setInterval(() => send({ type: "ping" }), 25000);
  };
  ws.onmessage = (event) => {
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    if (msg.type === "state") onState(msg);
    else if (msg.type === "error") setStatus(msg.message, "error");
    else if (msg.type === "notice") onNotice(msg.event);
  };
  ws.onclose = (event) => {
    clearInterval(heartbeat);
    if (event.code === 4401) { finished = true; setStatus(T.signed_out, "error"); return; }
    if (event.code === 4404) { finished = true; setStatus(T.no_table, "error"); return; }
    if (finished) return;
    setStatus(T.reconnecting, "error");
    setTimeout(connect, delay + Math.random() * delay / 2);
    delay = Math.min(delay * 2, 15000);
  };
}

function onState(msg) {
  if (msg.version < lastVersion) return; // an older picture arriving late
  const gap = lastVersion >= 0 && msg.version > lastVersion + 1;
  lastVersion = msg.version;
  state = msg.state;
  if (state.clock && state.clock.now) skew = state.clock.now - Date.now();
  render();
  if (gap) send({ type: "sync" });
}

function onNotice(event) {
  if (event.kind !== "invitation") return;
  const banner = el("p", { class: "banner" }, fmt(T.invited, event), " ",
    el("a", { href: `/t/${event.code}/` }, T.open));
  $("status").after(banner);
}

// -- rendering --------------------------------------------------------------------------------

function seatName(i) {
  const seat = state.seats[i];
  return seat ? seat.name || T.empty_seat : "";
}

function render() {
  const view = state.view;
  const you = state.you.seat;
  const paused = $("paused");
  paused.hidden = !state.table.paused;
  paused.textContent = state.table.paused_by ? fmt(T.paused_by, { name: state.table.paused_by })
    : T.paused;
  renderSeats(view, you);
  renderScores();
  renderTurn(view, you);
  renderLine(view);
  renderHand(view, you);
  renderResult(view);
  renderHost(view);
}

function renderSeats(view, you) {
  const box = $("seats");
  box.replaceChildren(...state.seats.map((seat) => {
    const i = seat.index;
    const bits = [];
    if (seat.avatar) bits.push(el("img", { class: "avatar", src: `${AVATARS}${seat.avatar}.svg`, alt: "" }));
    bits.push(el("span", { class: "name" }, seat.empty ? T.empty_seat : seat.name));
    if (i === you) bits.push(el("span", { class: "badge you" }, T.you));
    if (seat.bot) bits.push(el("span", { class: "badge" }, T.bot));
    if (seat.team !== null && seat.team !== undefined) bits.push(el("span", { class: "muted" }, fmt(T.team, { n: seat.team + 1 })));
    if (!seat.empty && !seat.bot) {
      bits.push(el("span", { class: seat.connected ? "presence on" : "presence off" },
        seat.connected ? T.online : T.away));
    }
    if (view) bits.push(el("span", { class: "count" }, fmt(T.tiles, { n: view.hand_counts[i] })));
    const passed = state.passed && state.passed[i];
    if (passed) bits.push(el("span", { class: "passed" }, passed));
    const turn = view && view.turn === i;
    return el("div", { class: `seat${seat.empty ? " empty" : ""}${turn ? " turn" : ""}`, "data-seat": i }, bits);
  }));
}

function renderScores() {
  const box = $("scores");
  const match = state.match;
  const parts = [el("span", {}, fmt(T.target, { n: state.table.target }))];
  if (match) {
    parts.unshift(el("strong", {}, fmt(T.match, { n: match.number })), " · ",
      fmt(T.round, { n: match.round + 1 }), " · ");
    const names = match.scores.length === 2 && state.seats.length === 4
      ? [0, 1].map((t) => `${seatName(t)} & ${seatName(t + 2)}`)
      : match.scores.map((_s, i) => seatName(i));
    parts.push(el("ul", { class: "score-list" },
      match.scores.map((score, i) => el("li", {}, `${names[i]}: `, el("strong", {}, score),
        match.best_of > 1 ? ` (${T.games}: ${match.games[i]})` : ""))));
  }
  box.replaceChildren(...parts);
}

function renderTurn(view, you) {
  const box = $("turn");
  if (!view) { box.textContent = state.table.state === "waiting" ? T.waiting : ""; return; }
  let text = "";
  if (view.turn === null) text = state.match && state.match.over ? T.match_over : T.result;
  else if (view.turn === you) text = T.your_turn;
  else text = fmt(T.turn_of, { name: seatName(view.turn) });
  const extra = view.boneyard_count ? ` · ${fmt(T.boneyard, { n: view.boneyard_count })}` : "";
  box.replaceChildren(text + extra, el("span", { id: "clock", class: "clock" }));
  box.classList.toggle("mine", view.turn === you && view.turn !== null);
  tick();
}

// The turn clock counts down to the server's deadline (corrected for this machine's clock).
let skew = 0;
function tick() {
  const node = $("clock");
  const clock = state && state.clock;
  if (!node || !clock) return;
  let left = null;
  if (state.table.paused && clock.paused_left_ms != null) left = clock.paused_left_ms;
  else if (clock.deadline && state.view && state.view.turn !== null) {
    left = Math.max(0, clock.deadline - (Date.now() + skew));
  }
  node.textContent = left === null ? "" : ` · ${T.time_left}: ${Math.ceil(left / 1000)} s`;
}
setInterval(tick, 500);

function tileNode(name, cls = "tile") {
  const [a, b] = name.split("-");
  return el("span", { class: cls, title: name }, el("b", {}, a), el("b", {}, b));
}

// The line as arms around the first tile: A grows to the left, B to the right, C and D (the
// all-fives spinner) are listed under it.
function renderLine(view) {
  const box = $("line");
  if (!view || !view.moves.some((m) => m.play)) { box.replaceChildren(el("p", { class: "muted" }, T.empty_line)); return; }
  const arms = { A: [], B: [], C: [], D: [] };
  let first = null;
  for (const move of view.moves) {
    if (!move.play) continue;
    if (first === null) { first = move.play; continue; }
    arms[move.end || "B"].push(move.play);
  }
  const row = [
    el("span", { class: "end-label" }, `A${view.ends.A !== undefined ? ` (${view.ends.A})` : ""}`),
    ...arms.A.slice().reverse().map((t) => tileNode(t)),
    tileNode(first, "tile first"),
    ...arms.B.map((t) => tileNode(t)),
    el("span", { class: "end-label" }, `B${view.ends.B !== undefined ? ` (${view.ends.B})` : ""}`),
  ];
  const lines = [el("div", { class: "arm" }, row)];
  for (const end of ["C", "D"]) {
    if (arms[end].length || view.ends[end] !== undefined) {
      lines.push(el("div", { class: "arm" }, el("span", { class: "end-label" },
        `${end}${view.ends[end] !== undefined ? ` (${view.ends[end]})` : ""}`),
      ...arms[end].map((t) => tileNode(t))));
    }
  }
  box.replaceChildren(...lines);
}

function renderHand(view, you) {
  const area = $("hand-area");
  area.hidden = you === null || !view;
  $("end-choice").hidden = true;
  if (area.hidden) return;
  const legal = view.legal || [];
  const canPlay = !state.table.paused;
  $("hand").replaceChildren(...view.hand.map((tile) => {
    const moves = legal.filter((m) => m.play === tile);
    const node = tileNode(tile, `tile hand-tile${moves.length ? " legal" : ""}`);
    const button = el("button", { type: "button", class: "tile-button", disabled: !(moves.length && canPlay),
      "data-tile": tile, onclick: () => choose(tile, moves) }, node);
    return button;
  }));
  const onlyPass = legal.length === 1 && legal[0].pass;
  $("pass").disabled = !(onlyPass && canPlay);
}

function choose(tile, moves) {
  const view = state.view;
  const ends = [...new Set(moves.map((m) => m.end).filter(Boolean))];
  const play = (end) => send({ type: "play", round: view.round, ply: view.moves.length, tile, end });
  if (ends.length <= 1) { play(ends[0]); return; }
  const box = $("end-choice");
  box.replaceChildren(el("span", {}, fmt(T.which_end, { tile })),
    ...ends.map((end) => el("button", { type: "button", onclick: () => play(end) },
      `${fmt(T.end, { end })} (${view.ends[end]})`)),
    el("button", { type: "button", class: "secondary", onclick: () => { box.hidden = true; } }, T.cancel));
  box.hidden = false;
}

$("pass").addEventListener("click", () => {
  const view = state && state.view;
  if (view) send({ type: "pass", round: view.round, ply: view.moves.length });
});

function pips(hand) {
  return hand.reduce((sum, t) => sum + t.split("-").reduce((a, b) => a + Number(b), 0), 0);
}

function renderResult(view) {
  const box = $("result");
  const result = state.result;
  box.hidden = !result;
  if (!result) return;
  const hands = (view && view.revealed) || [];
  box.replaceChildren(el("h2", {}, T.result), el("p", { class: "sentence" }, result.sentence),
    el("h3", {}, T.revealed),
    el("ul", { class: "revealed" }, hands.map((hand, i) => el("li", {},
      el("span", { class: "name" }, seatName(i)), " ", hand.map((t) => tileNode(t)),
      " ", el("span", { class: "muted" }, fmt(T.pips, { n: result.pips[i] ?? pips(hand) }))))),
    state.match && state.match.over ? el("p", {}, el("strong", {}, T.match_over)) : "");
}

function renderHost(view) {
  const box = $("host");
  box.hidden = !state.you.host;
  if (box.hidden) return;
  const host = (action, label, extra = {}) => el("button", { type: "button",
    onclick: () => send({ type: "host", action, ...extra }) }, label);
  const buttons = [];
  const t = state.table;
  if (t.state === "waiting") {
    buttons.push(host("start", T.start));
    if (t.allow_bots) {
      buttons.push(host("add_bot", T.add_bot));
      for (const seat of state.seats) {
        if (seat.bot) buttons.push(host("remove_bot", `${T.remove_bot} (${seat.index + 1})`, { seat: seat.index }));
      }
    }
  } else if (t.state === "playing") {
    buttons.push(t.paused ? host("resume", T.resume) : host("pause", T.pause));
    if (view && view.turn === null && state.match && !state.match.over) buttons.push(host("next_round", T.next_round));
    if (state.match && state.match.over) buttons.push(host("new_match", T.new_match));
  }
  box.replaceChildren(el("strong", {}, T.host_controls), ...buttons);
}

// -- page bits --------------------------------------------------------------------------------

const copy = $("copy-link");
if (copy) {
  copy.addEventListener("click", async () => {
    const input = $("join-link");
    input.select();
    try { await navigator.clipboard.writeText(input.value); } catch { document.execCommand("copy"); }
  });
}

connect();
