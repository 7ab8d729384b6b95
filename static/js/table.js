// The table page: one socket, one render function, an SVG board. Protocol: docs/protocol.md.
//
// Every "state" message is this seat's whole picture, so rendering never merges anything: it
// replaces. Versions only decide whether to resync: a message whose version jumps by more than
// one (a doorbell was lost) and every reconnect send {"type": "sync"}; every ping says which
// version the page shows, so a page whose last doorbell was lost is brought up to date.

import { backsSvg, fmt, halves, lineSvg, pipsMarkup, tileSvg, tileWords as wordsOf } from "./board.js";

const script = document.getElementById("table-script");
const T = JSON.parse(document.getElementById("table-strings").textContent);
const PREFS = JSON.parse(document.getElementById("table-prefs").textContent);
const AVATARS = script.dataset.avatars;
const N = T.numbers; // number words, "blank" .. "six"
const $ = (id) => document.getElementById(id);
const tileWords = (t) => wordsOf(t, N);

let ws = null;
let lastVersion = -1;
let state = null;
let delay = 500;
let finished = false;
let heartbeat = null;
let skew = 0; // server clock minus this machine's
let choosing = null; // {tile, ends} while the player picks an end
let focusTile = null; // keep keyboard focus on the same tile across renders

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "html") node.innerHTML = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, "");
    else if (value !== false && value != null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null && child !== "") node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function setStatus(text, kind = "") {
  const box = $("status");
  box.textContent = text;
  box.className = `status ${kind}`;
}

function announce(text) {
  if (!text) return;
  const box = $("announce");
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 30);
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
    if (lastVersion >= 0) send({ type: "sync" });
    clearInterval(heartbeat);
    heartbeat = setInterval(() => send({ type: "ping", version: lastVersion }), 25000);
  };
  ws.onmessage = (event) => {
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    if (msg.type === "state") onState(msg);
    else if (msg.type === "error") { setStatus(msg.message, "error"); announce(msg.message); }
    else if (msg.type === "notice") onNotice(msg.event);
  };
  ws.onclose = (event) => {
    clearInterval(heartbeat);
    if (event.code === 4401) { finished = true; setStatus(T.signed_out, "error"); return; }
    if (event.code === 4404) { finished = true; setStatus(T.no_table, "error"); return; }
    if (event.code === 4403) { finished = true; setStatus(T.banned, "error"); return; }
    if (finished) return;
    setStatus(T.reconnecting, "error");
    setTimeout(connect, delay + Math.random() * delay / 2);
    delay = Math.min(delay * 2, 15000);
  };
}

function onState(msg) {
  if (msg.version < lastVersion) return; // an older picture arriving late
  const gap = lastVersion >= 0 && msg.version > lastVersion + 1;
  const fresh = msg.version > lastVersion;
  lastVersion = msg.version;
  state = msg.state;
  if (state.clock && state.clock.now) skew = state.clock.now - Date.now();
  if (fresh && $("status").classList.contains("error")) setStatus(T.connected, "ok");
  render();
  stateListeners.forEach((fn) => fn(state));
  if (fresh) (msg.events || []).forEach(describeEvent);
  if (gap) send({ type: "sync" });
}

function describeEvent(event) {
  if (event.kind === "move") {
    const name = seatName(event.seat);
    const by = event.by === "table" ? ` ${T.by_table}` : "";
    announce(event.pass ? fmt(T.passed, { name }) + by
      : fmt(T.played, { name, tile: tileWords(event.play) }) + by);
  } else if (event.kind === "round_over" && state.result) announce(state.result.sentence);
  else if (event.kind === "paused") announce($("paused").textContent);
  else if (event.kind === "resumed") announce(T.resumed);
}

function onNotice(event) {
  if (event.kind !== "invitation") return;
  const banner = el("p", { class: "banner" }, fmt(T.invited, event), " ",
    el("a", { href: `/t/${event.code}/` }, T.open));
  $("status").after(banner);
}

// -- the line (drawn by board.js) ---------------------------------------------------------------

function renderLine(view) {
  const box = $("line");
  const width = Math.max(240, box.clientWidth || 320);
  const drawn = view && lineSvg(view, { preset: state.table.preset, strings: T, choosing, width });
  if (!drawn) {
    box.replaceChildren(el("p", { class: "empty-line" }, view ? T.empty_line : ""));
    return;
  }
  box.innerHTML = drawn.svg;
  box.setAttribute("aria-description", drawn.tiles.map(tileWords).join(", "));
  box.querySelectorAll(".end-marker.pick").forEach((node) => {
    const play = () => playAt(node.dataset.end);
    node.addEventListener("click", play);
    node.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); play(); } });
  });
}

// -- seats around the table ---------------------------------------------------------------------

// Where each seat sits, your seat (or seat 0 for a watcher) at the bottom; partners face.
function positions(n, me) {
  const order = { 2: ["bottom", "top"], 3: ["bottom", "right", "left"],
    4: ["bottom", "right", "top", "left"] }[n] || ["bottom", "right", "top", "left"];
  const out = {};
  for (let k = 0; k < n; k += 1) out[(me + k) % n] = order[k];
  return out;
}

function seatName(i) {
  const seat = state.seats[i];
  return seat ? seat.name || T.empty_seat : "";
}

function renderSeats(view, me) {
  const where = positions(state.seats.length, me === null ? 0 : me);
  for (const slot of ["top", "left", "right", "bottom"]) $(`slot-${slot}`).replaceChildren();
  $("felt").dataset.players = state.seats.length;
  for (const seat of state.seats) {
    const i = seat.index;
    const turn = view && view.turn === i && !state.result;
    const bits = [];
    const head = el("div", { class: "seat-head" });
    if (seat.avatar) head.append(el("img", { class: "avatar", src: `${AVATARS}${seat.avatar}.svg`, alt: "", width: 32, height: 32 }));
    const who = el("div", { class: "who" }, el("span", { class: "name" }, seat.empty ? T.empty_seat : seat.name));
    const tags = el("div", { class: "tags" });
    if (!seat.empty && !seat.bot) {
      tags.append(el("span", { class: `presence ${seat.connected ? "on" : "off"}` }, seat.connected ? T.online : T.away));
    }
    if (seat.bot) tags.append(el("span", { class: "badge" }, T.bot));
    if (seat.standin) tags.append(el("span", { class: "badge standin", title: T.standin_help }, T.standin));
    if (i === me) tags.append(el("span", { class: "badge you" }, T.you));
    else if (me !== null && seat.team !== null && seat.team !== undefined && seat.team === state.seats[me].team) {
      tags.append(el("span", { class: "badge partner" }, T.partner));
    }
    who.append(tags);
    head.append(who);
    bits.push(head);
    if (view) {
      const count = view.hand_counts[i];
      bits.push(el("div", { class: "count", html: i === me ? "" : backsSvg(count) },
        el("span", { class: "n" }, fmt(count === 1 ? T.tile_one : T.tiles, { n: count }))));
    }
    const passed = state.passed && state.passed[i];
    if (passed) bits.push(el("div", { class: "passed" }, passed));
    if (turn && state.clock && (state.clock.deadline || state.table.paused)) {
      bits.push(el("div", { class: "seat-clock" }, el("span", { class: "track" }, el("span", { class: "bar" })),
        el("span", { class: "secs" })));
    }
    const team = seat.team !== null && seat.team !== undefined ? ` team${seat.team}` : "";
    const node = el("div", { class: `seat${seat.empty ? " empty" : ""}${turn ? " turn" : ""}${team}`,
      "data-seat": i, "aria-current": turn ? "true" : false }, bits);
    $(`slot-${where[i]}`).append(node);
  }
}

// -- header: scores, round, series ----------------------------------------------------------------

function sideNames() {
  const match = state.match;
  if (match.scores.length === 2 && state.seats.length === 4) {
    return [0, 1].map((t) => `${seatName(t)} & ${seatName(t + 2)}`);
  }
  return match.scores.map((_s, i) => seatName(i));
}

function renderScores() {
  const box = $("scores");
  const match = state.match;
  if (!match) { box.replaceChildren(el("span", { class: "muted" }, state.table.state === "waiting" ? T.waiting : "")); return; }
  const names = sideNames();
  const items = match.scores.map((score, i) => el("li", {},
    el("span", { class: "side" }, names[i]), " ", el("strong", {}, score),
    match.best_of > 1 ? el("span", { class: "games" }, ` · ${fmt(T.games_won, { n: match.games[i] })}`) : ""));
  box.replaceChildren(
    el("span", { class: "round" }, `${fmt(T.match, { n: match.number })} · ${fmt(T.round, { n: match.round + 1 })}`),
    match.best_of > 1 ? el("span", { class: "series" }, fmt(T.best_of, { n: match.best_of })) : "",
    el("ul", { class: "score-list", "aria-label": T.scores }, items));
}

// -- the turn line and its clock ---------------------------------------------------------------

function renderTurn(view, me) {
  const text = $("turn-text");
  let words = "";
  if (!view) words = state.table.state === "waiting" ? T.waiting : "";
  else if (state.result) words = "";
  else if (view.turn === me) words = T.your_turn;
  else words = fmt(T.turn_of, { name: seatName(view.turn) });
  if (view && view.boneyard_count) words += ` · ${fmt(T.boneyard, { n: view.boneyard_count })}`;
  text.textContent = words;
  $("turn").classList.toggle("mine", !!view && view.turn === me && !state.result);
  tick();
}

function timeLeft() {
  const clock = state && state.clock;
  if (!clock || !state.view || state.result) return null;
  if (state.table.paused) return clock.paused_left_ms;
  if (!clock.deadline) return null;
  return Math.max(0, clock.deadline - (Date.now() + skew));
}

function tick() {
  if (!state) return;
  const left = timeLeft();
  const clock = state.clock || {};
  const total = Math.max((clock.turn_seconds || 0) * 1000,
    clock.deadline && clock.started ? clock.deadline - clock.started : 0) || 1;
  const frac = left === null ? 0 : Math.max(0, Math.min(1, left / total));
  const secs = left === null ? "" : `${Math.ceil(left / 1000)} s`;
  const low = left !== null && left < 5000;
  const wrap = $("clock");
  wrap.hidden = left === null;
  for (const bar of document.querySelectorAll(".clock-bar, .seat-clock .bar")) {
    bar.style.width = `${(frac * 100).toFixed(2)}%`;
    bar.classList.toggle("low", low);
  }
  for (const node of document.querySelectorAll(".clock-secs, .seat-clock .secs")) node.textContent = secs;
  wrap.setAttribute("aria-label", left === null ? "" : `${T.time_left}: ${secs}`);
}
setInterval(tick, 200);

// -- your hand ---------------------------------------------------------------------------------

function orderKey(view) {
  return `domino:hand:${state.table.id}:${state.match ? state.match.number : 0}:${view.round}:${view.seat}`;
}

function orderedHand(view) {
  let saved = [];
  try { saved = JSON.parse(localStorage.getItem(orderKey(view)) || "[]"); } catch { saved = []; }
  const hand = view.hand.slice();
  const kept = saved.filter((t) => hand.includes(t));
  return kept.concat(hand.filter((t) => !kept.includes(t)));
}

function saveOrder(view, order) {
  try { localStorage.setItem(orderKey(view), JSON.stringify(order)); } catch { /* private mode */ }
}

function handTileSize() {
  return window.innerWidth < 420 ? 23 : window.innerWidth < 800 ? 26 : 30;
}

function renderHand(view, me) {
  const area = $("hand-area");
  area.hidden = me === null || !view;
  if (area.hidden) { choosing = null; return; }
  const legal = view.legal || [];
  const live = !state.table.paused && !state.result;
  const u = handTileSize();
  const order = orderedHand(view);
  if (choosing && !order.includes(choosing.tile)) choosing = null;
  $("hand").replaceChildren(...order.map((tile) => {
    const moves = legal.filter((m) => m.play === tile);
    const ok = moves.length > 0 && live;
    const cls = `hand-tile${moves.length ? " legal" : " dim"}${choosing && choosing.tile === tile ? " chosen" : ""}`;
    return el("button", { type: "button", class: `${cls} tile-button`, "data-tile": tile, "aria-disabled": ok ? "false" : "true",
      "aria-label": tileWords(tile) + (ok ? "" : ` (${T.cannot_play})`), html: tileSvg(tile, u, true),
      tabindex: "-1" });
  }));
  // One tab stop in the hand: the focused tile, else the first legal one, else the first.
  const buttons = [...$("hand").children];
  const stop = buttons.find((b) => b.dataset.tile === focusTile) || buttons.find((b) => b.getAttribute("aria-disabled") === "false") || buttons[0];
  if (stop) stop.tabIndex = 0;
  if (focusTile && stop && stop.dataset.tile === focusTile && $("hand").contains(document.activeElement)) stop.focus();
  const onlyPass = legal.length === 1 && legal[0].pass;
  const pass = $("pass");
  pass.disabled = !(onlyPass && live);
  pass.classList.toggle("ready", !pass.disabled);
  renderEndChoice(view);
}

function movesFor(tile) {
  return ((state.view && state.view.legal) || []).filter((m) => m.play === tile);
}

function tryPlay(tile) {
  const view = state.view;
  if (!view || state.table.paused || state.result) return;
  const moves = movesFor(tile);
  if (!moves.length) { announce(fmt(T.does_not_fit, { tile: tileWords(tile) })); return; }
  const ends = [...new Set(moves.map((m) => m.end).filter(Boolean))];
  if (ends.length <= 1) { choosing = null; sendPlay(tile, ends[0]); return; }
  choosing = { tile, ends };
  render();
  announce(fmt(T.which_end, { tile: tileWords(tile) }));
  const first = $("end-choice").querySelector("button");
  if (first) first.focus();
}

function sendPlay(tile, end) {
  const view = state.view;
  const message = { type: "play", round: view.round, ply: view.moves.length, tile };
  if (end) message.end = end;
  send(message);
}

function playAt(end) {
  if (!choosing) return;
  const { tile } = choosing;
  choosing = null;
  sendPlay(tile, end);
  render();
}

function renderEndChoice(view) {
  const box = $("end-choice");
  box.hidden = !choosing;
  if (!choosing) { box.replaceChildren(); return; }
  box.replaceChildren(el("span", {}, fmt(T.which_end, { tile: tileWords(choosing.tile) })),
    ...choosing.ends.map((end) => el("button", { type: "button", class: "end-button", "data-end": end,
      onclick: () => playAt(end) }, fmt(T.end_label, { end, n: N[view.ends[end]] }))),
    el("button", { type: "button", class: "secondary", onclick: () => { choosing = null; render(); } }, T.cancel));
}

// Keyboard: arrows move between tiles, Enter/Space plays; arrows move between the end buttons.
$("hand").addEventListener("keydown", (e) => {
  const buttons = [...$("hand").querySelectorAll(".hand-tile")];
  const at = buttons.indexOf(document.activeElement);
  if (at < 0) return;
  let next = null;
  if (e.key === "ArrowRight" || e.key === "ArrowDown") next = (at + 1) % buttons.length;
  else if (e.key === "ArrowLeft" || e.key === "ArrowUp") next = (at - 1 + buttons.length) % buttons.length;
  else if (e.key === "Home") next = 0;
  else if (e.key === "End") next = buttons.length - 1;
  if (next === null) return;
  e.preventDefault();
  buttons[at].tabIndex = -1;
  buttons[next].tabIndex = 0;
  buttons[next].focus();
  focusTile = buttons[next].dataset.tile;
});

$("end-choice").addEventListener("keydown", (e) => {
  const buttons = [...$("end-choice").querySelectorAll("button")];
  const at = buttons.indexOf(document.activeElement);
  if (e.key === "Escape") { choosing = null; render(); return; }
  if (at < 0 || !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(e.key)) return;
  e.preventDefault();
  const step = e.key === "ArrowRight" || e.key === "ArrowDown" ? 1 : -1;
  buttons[(at + step + buttons.length) % buttons.length].focus();
});

// Tap plays; a drag (pointer moved more than a few pixels) reorders the hand instead.
let drag = null;
$("hand").addEventListener("pointerdown", (e) => {
  const button = e.target.closest(".hand-tile");
  if (!button || e.button !== 0) return;
  drag = { button, x: e.clientX, y: e.clientY, moved: false, id: e.pointerId };
});
$("hand").addEventListener("pointermove", (e) => {
  if (!drag || e.pointerId !== drag.id) return;
  const dx = e.clientX - drag.x;
  const dy = e.clientY - drag.y;
  if (!drag.moved && Math.hypot(dx, dy) < 8) return;
  if (!drag.moved) { drag.moved = true; drag.button.setPointerCapture(e.pointerId); drag.button.classList.add("dragging"); }
  drag.button.style.transform = `translate(${dx}px, ${dy}px)`;
});
function endDrag(e) {
  if (!drag || e.pointerId !== drag.id) return;
  const { button, moved } = drag;
  drag = null;
  if (!moved) return;
  button.classList.remove("dragging");
  button.style.transform = "";
  const others = [...$("hand").querySelectorAll(".hand-tile")];
  let best = 0;
  let bestD = Infinity;
  others.forEach((b, i) => {
    const r = b.getBoundingClientRect();
    const d = Math.hypot(e.clientX - (r.left + r.width / 2), (e.clientY - (r.top + r.height / 2)) * 2);
    if (d < bestD) { bestD = d; best = i; }
  });
  const order = others.map((b) => b.dataset.tile);
  const from = order.indexOf(button.dataset.tile);
  order.splice(from, 1);
  order.splice(best, 0, button.dataset.tile);
  saveOrder(state.view, order);
  button.dataset.dragged = "1";
  setTimeout(() => { delete button.dataset.dragged; }, 0);
  render();
}
$("hand").addEventListener("pointerup", endDrag);
$("hand").addEventListener("pointercancel", endDrag);
$("hand").addEventListener("click", (e) => {
  const button = e.target.closest(".hand-tile");
  if (!button || button.dataset.dragged) return;
  focusTile = button.dataset.tile;
  tryPlay(button.dataset.tile);
});

$("pass").addEventListener("click", () => {
  const view = state && state.view;
  if (view) send({ type: "pass", round: view.round, ply: view.moves.length });
});

// -- learning mode ---------------------------------------------------------------------------------

function renderLearning(view, me) {
  const box = $("learning");
  box.hidden = !PREFS.learning_mode || !view;
  if (box.hidden) return;
  const seen = new Set(view.hand);
  view.moves.forEach((m) => { if (m.play) seen.add(halves(m.play).sort().join("-")); });
  const known = [...seen].map((t) => halves(t));
  const cells = N.map((_w, v) => {
    const unseen = 7 - known.filter(([a, b]) => a === v || b === v).length;
    return el("li", { "aria-label": fmt(T.unseen_of, { n: unseen, number: N[v] }) },
      el("span", { class: "face", html: `<svg viewBox="0 0 20 20" width="20" height="20" aria-hidden="true"><rect x="0.5" y="0.5" width="19" height="19" rx="3"/><g class="pips">${pipsMarkup(v, 0, 0, 20, false)}</g></svg>` }),
      el("strong", {}, unseen));
  });
  const passes = Object.entries(view.passed_on || {}).filter(([seat]) => Number(seat) !== me)
    .map(([seat, nums]) => el("li", {}, el("strong", {}, seatName(Number(seat))), ": ",
      nums.map((v) => N[v]).join(", ")));
  box.replaceChildren(el("h2", {}, T.learning),
    el("p", { class: "muted" }, T.unseen_help), el("ul", { class: "unseen" }, cells),
    el("h3", {}, T.passed_numbers),
    passes.length ? el("ul", { class: "passes" }, passes) : el("p", { class: "muted" }, T.nobody_passed));
}

// -- end of round, end of match ----------------------------------------------------------------

function handPips(hand) {
  return hand.reduce((sum, t) => sum + halves(t).reduce((a, b) => a + b, 0), 0);
}

function renderResult(view) {
  const box = $("result");
  const result = state.result;
  box.hidden = !result;
  if (!result) return;
  const hands = (view && view.revealed) || [];
  const pips = hands.map((h, i) => (result.pips && result.pips[i] !== undefined ? result.pips[i] : handPips(h)));
  const match = state.match;
  const partners = match && match.scores.length === 2 && state.seats.length === 4;
  const sides = partners ? [0, 1].map((t) => pips[t] + pips[t + 2]) : pips;
  const names = match ? sideNames() : [];
  const parts = [el("h2", {}, match && match.over ? T.match_over : T.result),
    el("p", { class: "sentence" }, result.sentence)];
  if (result.points) parts.push(el("p", { class: "points" }, fmt(T.points_scored, { n: result.points })));
  parts.push(el("ul", { class: "side-pips" }, sides.map((p, i) => el("li", {}, `${names[i] || seatName(i)}: `, el("strong", {}, fmt(T.pips, { n: p }))))));
  parts.push(el("h3", {}, T.revealed));
  parts.push(el("ul", { class: "revealed" }, hands.map((hand, i) => el("li", { "data-seat": i },
    el("span", { class: "name" }, seatName(i)),
    el("span", { class: "tiles", "aria-label": hand.map(tileWords).join(", ") || T.no_tiles,
      html: hand.map((t) => tileSvg(t, 14, false)).join("") }),
    el("span", { class: "muted" }, fmt(T.pips, { n: pips[i] }))))));
  if (match && match.over) {
    const winner = match.winner !== null && match.winner !== undefined ? names[match.winner] : "";
    parts.push(el("p", { class: "winner" }, fmt(T.winner_is, { name: winner })));
    parts.push(el("p", {}, `${T.final_scores}: `, names.map((n, i) => `${n} ${match.scores[i]}`).join(" · ")));
  }
  box.replaceChildren(...parts);
}

// -- host controls ---------------------------------------------------------------------------------

function renderHost(view) {
  const box = $("host");
  box.hidden = !state.you.host;
  if (box.hidden) return;
  const host = (action, label, extra = {}, cls = "") => el("button", { type: "button", class: cls,
    "data-action": action, onclick: () => send({ type: "host", action, ...extra }) }, label);
  const buttons = [];
  const t = state.table;
  if (t.state === "waiting") {
    buttons.push(host("start", T.start));
    if (t.allow_bots) {
      buttons.push(host("add_bot", T.add_bot, {}, "secondary"));
      for (const seat of state.seats) {
        if (seat.bot) buttons.push(host("remove_bot", `${T.remove_bot} (${seat.name || seat.index + 1})`, { seat: seat.index }, "secondary"));
      }
    }
  } else if (t.state === "playing") {
    buttons.push(t.paused ? host("resume", T.resume) : host("pause", T.pause, {}, "secondary"));
    if (view && state.result && state.match && !state.match.over) buttons.push(host("next_round", T.next_round));
    if (state.match && state.match.over) buttons.push(host("new_match", T.new_match));
  }
  box.replaceChildren(el("span", { class: "label" }, T.host_controls), ...buttons);
}

// -- the whole page ----------------------------------------------------------------------------------

function render() {
  if (!state) return;
  const view = state.view;
  const me = state.you.seat;
  const closed = $("closed");
  closed.hidden = state.table.state !== "closed";
  closed.textContent = state.table.closed_reason || T.closed;
  $("table-name").textContent = state.table.name || "";
  if (!closed.hidden) finished = true; // a closed table stays closed: no reconnecting to it
  const paused = $("paused");
  paused.hidden = !state.table.paused || !closed.hidden;
  paused.textContent = state.table.paused_by ? fmt(T.paused_by, { name: state.table.paused_by }) : T.paused;
  // Taking or leaving a seat is only for a table that has not started.
  for (const form of document.querySelectorAll(".seat-form")) form.hidden = state.table.state !== "waiting";
  renderScores();
  renderSeats(view, me);
  renderTurn(view, me);
  renderHand(view, me);
  renderLine(view);
  renderLearning(view, me);
  renderResult(view);
  renderHost(view);
}

// Preferences (auto-pass, learning mode): saved on the profile.
const prefs = $("prefs");
if (prefs) {
  prefs.addEventListener("change", async (e) => {
    const input = e.target;
    const body = new FormData();
    body.append("csrfmiddlewaretoken", prefs.querySelector("[name=csrfmiddlewaretoken]").value);
    body.append(input.name, input.checked ? "1" : "0");
    PREFS[input.name] = input.checked;
    render();
    try {
      const response = await fetch(prefs.action, { method: "POST", body, credentials: "same-origin" });
      const data = await response.json();
      if (!data.ok) setStatus(data.message, "error");
    } catch { setStatus(T.not_saved, "error"); }
  });
}

const copy = $("copy-link");
if (copy) {
  copy.addEventListener("click", async () => {
    const input = $("join-link");
    input.select();
    try { await navigator.clipboard.writeText(input.value); } catch { document.execCommand("copy"); }
  });
}

let resizeTimer = null;
window.addEventListener("resize", () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(render, 120); });

// Other page modules (static/js/chat.js) share the socket and see every state.
const stateListeners = [];
window.dominoTable = { send, onState: (fn) => { stateListeners.push(fn); if (state) fn(state); } };

// The page arrives with this person's state; the socket keeps it current.
const initial = document.getElementById("table-initial");
if (initial) {
  state = JSON.parse(initial.textContent);
  if (state.clock && state.clock.now) skew = state.clock.now - Date.now();
  render();
}
window.dispatchEvent(new Event("domino-table-ready"));
connect();
