// The table page: one socket, one render function, an SVG board. Protocol: docs/protocol.md.
//
// Every "state" message is this seat's whole picture, so rendering never merges anything: it
// replaces. Versions only decide whether to resync: a message whose version jumps by more than
// one (a doorbell was lost) and every reconnect send {"type": "sync"}; every ping says which
// version the page shows, so a page whose last doorbell was lost is brought up to date.

import { backsSvg, endNumbers, endsBefore, fmt, halves, lineSvg, pipsMarkup, tileSvg,
  tileWords as wordsOf } from "./board.js";

const script = document.getElementById("table-script");
const T = JSON.parse(document.getElementById("table-strings").textContent);
const PREFS = JSON.parse(document.getElementById("table-prefs").textContent);
const AVATARS = script.dataset.avatars;
const SOUNDS = script.dataset.sounds;
// Passes there are never a choice (draw, block, all fives): no need to say the table made them.
const PASSES_BY_ITSELF = script.dataset.autoPass === "1";
const REDUCED = window.matchMedia("(prefers-reduced-motion: reduce)");
// How long a move takes to fly from its seat to the line, per person (seed 004's game speed).
const SPEED_MS = { slow: 1100, normal: 600, fast: 280 };
const TILE_SCALE = { small: 0.85, medium: 1, large: 1.25 };
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
let events = []; // the events of the state being rendered (empty for a resync)
let seenDraws = ""; // round and count of draws already told, so each draw is told once
let tableState = null; // the table's state at the last render: "waiting", "playing", ...
let lastLine = ""; // the line's markup as drawn: unchanged, it is not redrawn
let warned = null; // the turn whose time running out was already sounded
let wasMine = false;
const lists = new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" });

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

// Close codes after which the page stops reconnecting, to its own words for each
// (docs/protocol.md, "Opening"); any other close is a drop, and the page reconnects.
const FINAL_CLOSES = { 4401: "signed_out", 4403: "banned", 4404: "no_table", 4410: "watching_off" };

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
  let closing = null; // this socket's "closing" frame: why the server is about to close it
  ws.onmessage = (event) => {
    let msg;
    try { msg = JSON.parse(event.data); } catch { return; }
    if (msg.type === "state") onState(msg);
    else if (msg.type === "error") { setStatus(msg.message, "error"); announce(msg.message); }
    else if (msg.type === "notice") onNotice(msg.event);
    else if (msg.type === "closing") closing = msg;
  };
  ws.onclose = (event) => {
    clearInterval(heartbeat);
    const final = FINAL_CLOSES[event.code];
    if (final) {
      // The server's words (the close itself carries no reason through Daphne); the page's
      // own if its frame never came.
      finished = true;
      setStatus(closing && closing.code === event.code ? closing.message : T[final], "error");
      return;
    }
    if (finished) return;
    setStatus(T.reconnecting, "error");
    setTimeout(connect, delay + Math.random() * delay / 2);
    delay = Math.min(delay * 2, 15000);
  };
}

function onState(msg) {
  // An older picture arriving late, unless the server says its history went back (a database
  // restored behind what this page was sent): then its state is the truth, whatever its number.
  if (msg.version < lastVersion && !msg.rewound) return;
  const gap = lastVersion >= 0 && msg.version > lastVersion + 1;
  const fresh = msg.version > lastVersion;
  lastVersion = msg.version;
  state = msg.state;
  if (state.clock && state.clock.now) skew = state.clock.now - Date.now();
  const status = $("status").classList;
  if (fresh && (status.contains("error") || status.contains("notice"))) setStatus(T.connected, "ok");
  events = fresh ? msg.events || [] : [];
  render();
  stateListeners.forEach((fn) => fn(state));
  if (fresh) {
    events.forEach(describeEvent);
    animateMoves(events);
    soundsFor(events);
    tellDraws();
  }
  events = [];
  if (gap) send({ type: "sync" });
}

// The move event's entry in this round's moves, or null when the event is of an earlier round.
function roundMove(event) {
  const moves = (state.view && state.view.moves) || [];
  const move = moves[event.ply];
  return move && move.seat === event.seat && !!move.pass === !!event.pass && move.play === event.play ? move : null;
}

function numberList(nums) {
  return lists.format(nums.map((v) => N[v]));
}

// One move in words: who played what (or passed on which numbers), and whether the table did it.
function moveWords(move, ply) {
  const name = seatName(move.seat);
  if (move.pass) {
    const nums = state.view ? endNumbers(endsBefore(state.view, state.table.preset, ply)) : [];
    const words = nums.length ? fmt(T.passed_on, { name, numbers: numberList(nums) }) : fmt(T.passed, { name });
    return move.by === "table" && !PASSES_BY_ITSELF ? `${words} ${T.passed_by_table}` : words;
  }
  const words = fmt(T.played, { name, tile: tileWords(move.play) });
  return move.by === "table" ? `${words} ${T.by_table}` : words;
}

function describeEvent(event) {
  if (event.kind === "move") {
    const move = roundMove(event);
    if (move) announce(moveWords(move, event.ply));
    else {
      const name = seatName(event.seat);
      announce(event.pass ? fmt(T.passed, { name }) : fmt(T.played, { name, tile: tileWords(event.play) }));
    }
  } else if (event.kind === "round_over" && state.result) announce(state.result.sentence);
  else if (event.kind === "paused") announce($("paused").textContent);
  else if (event.kind === "resumed") announce(T.resumed);
}

// Draws are public as counts (never faces): tell each one once, and show the drawer their tiles.
function tellDraws() {
  const view = state.view;
  if (!view) return;
  const draws = view.draws || [];
  const key = `${state.match ? state.match.number : 0}:${view.round}`;
  const [seenKey, seenCount] = seenDraws.split("|");
  const from = seenKey === key ? Number(seenCount) : draws.length; // a first look tells nothing
  seenDraws = `${key}|${draws.length}`;
  for (const draw of draws.slice(from)) {
    const mine = draw.seat === state.you.seat;
    announce(mine ? fmt(draw.count === 1 ? T.you_drew_one : T.you_drew, { n: draw.count })
      : fmt(draw.count === 1 ? T.drew_one : T.drew, { name: seatName(draw.seat), n: draw.count }));
  }
}

function onNotice(event) {
  if (event.kind !== "invitation") return;
  const banner = el("p", { class: "banner" }, fmt(T.invited, event), " ",
    el("a", { href: `/t/${event.code}/` }, T.open));
  $("status").after(banner);
}

// -- the line (drawn by board.js) ---------------------------------------------------------------

// The last tile placed, and the tiles the table placed for someone, are marked on the line.
function lineMarks(view) {
  const plies = view.moves.map((m, ply) => ({ ...m, ply })).filter((m) => m.play);
  return { last: plies.length ? plies[plies.length - 1].ply : null,
    byTable: new Set(plies.filter((m) => m.by === "table").map((m) => m.ply)) };
}

function renderLine(view) {
  const box = $("line");
  const width = Math.max(240, box.clientWidth || 320);
  const drawn = view && lineSvg(view, { preset: state.table.preset, strings: T, choosing, width, ...lineMarks(view) });
  if (!drawn) {
    lastLine = "";
    box.replaceChildren(el("p", { class: "empty-line" }, view ? T.empty_line : ""));
    return;
  }
  // Redrawing an unchanged line would cut short a move still flying to it.
  if (drawn.svg === lastLine) return;
  lastLine = drawn.svg;
  box.innerHTML = drawn.svg;
  const spinner = [...drawn.arms.C, ...drawn.arms.D].length
    ? `; C: ${drawn.arms.C.map(tileWords).join(", ") || "-"}; D: ${drawn.arms.D.map(tileWords).join(", ") || "-"}` : "";
  box.setAttribute("aria-description", drawn.tiles.map(tileWords).join(", ") + spinner);
  box.querySelectorAll(".end-marker.pick").forEach((node) => {
    const play = () => playAt(node.dataset.end);
    node.addEventListener("click", play);
    node.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); play(); } });
  });
}

// Each tile placed in this state flies from its seat to its place on the line (a copy of it
// above the page: the line's box would clip it), unless the person asked for less motion.
function animateMoves(batch) {
  if (REDUCED.matches) return;
  const duration = SPEED_MS[PREFS.game_speed] || SPEED_MS.normal;
  let delayMs = 0;
  for (const event of batch) {
    if (event.kind !== "move" || !event.play || !roundMove(event)) continue;
    const target = document.querySelector(`#line [data-ply="${event.ply}"]`);
    const seat = document.querySelector(`#felt .seat[data-seat="${event.seat}"]`);
    if (!target || !seat) continue;
    const to = target.getBoundingClientRect();
    const from = seat.getBoundingClientRect();
    const box = target.getBBox();
    const flying = el("div", { class: "flying", "aria-hidden": "true",
      html: `<svg viewBox="${box.x} ${box.y} ${box.width} ${box.height}" width="${to.width}" height="${to.height}">${target.outerHTML}</svg>` });
    flying.style.left = `${to.left}px`;
    flying.style.top = `${to.top}px`;
    document.body.append(flying);
    target.classList.add("arriving");
    const dx = from.left + from.width / 2 - (to.left + to.width / 2);
    const dy = from.top + from.height / 2 - (to.top + to.height / 2);
    const flight = flying.animate([{ transform: `translate(${dx}px, ${dy}px) scale(1.15)`, opacity: 0.6 },
      { transform: "none", opacity: 1 }], { duration, delay: delayMs, easing: "ease-out", fill: "backwards" });
    const land = () => { flying.remove(); target.classList.remove("arriving"); };
    flight.onfinish = land;
    flight.oncancel = land;
    delayMs += duration * 0.6;
  }
}

// -- sounds (seed 004): off unless the person turned them on; each file is fetched on first use --

const sounds = {};

function sound(name) {
  if (!PREFS.sounds || !SOUNDS) return;
  let audio = sounds[name];
  if (!audio) {
    audio = new Audio(`${SOUNDS}${name}.wav`);
    sounds[name] = audio;
  }
  audio.currentTime = 0;
  audio.play().catch(() => { /* the browser may refuse until the person has touched the page */ });
}

function soundsFor(batch) {
  for (const event of batch) {
    if (event.kind !== "move") continue;
    sound(event.pass ? "pass" : "place");
    break; // one sound per state, however many moves it brings
  }
  const view = state.view;
  const mine = !!view && view.turn === state.you.seat && !state.result && !state.table.paused;
  if (mine && !wasMine) setTimeout(() => sound("turn"), 250);
  wasMine = mine;
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
    if (seat.standin) tags.append(el("span", { class: "badge standin", title: seat.forfeited ? T.forfeited_help : T.standin_help }, T.standin));
    // Turn-based tables: a vacation stops this person's clock; timeouts in a row so far.
    if (seat.vacation_until && seat.vacation_until > Date.now() + skew) {
      tags.append(el("span", { class: "badge vacation" }, fmt(T.on_vacation, { when: new Date(seat.vacation_until).toLocaleString() })));
    }
    if (seat.timeouts && !seat.forfeited) tags.append(el("span", { class: "badge timeouts" }, fmt(T.timeouts, { n: seat.timeouts, limit: state.table.timeouts_to_standin })));
    // The club's rating (apps/club/state_part.py): the label is already in the page's language.
    if (seat.rating !== undefined) tags.append(el("span", { class: "badge rating", title: seat.rating_label, "aria-label": seat.rating_label }, seat.rating_provisional ? `${seat.rating}?` : String(seat.rating)));
    // Fair play (apps/fairplay/parts.py): the share of matches finished, once there are enough.
    if (typeof seat.fairplay === "number") tags.append(el("span", { class: "badge fairplay", title: seat.fairplay_label, "aria-label": seat.fairplay_label }, `${seat.fairplay}%`));
    if (i === me) tags.append(el("span", { class: "badge you" }, T.you));
    else if (me !== null && seat.team !== null && seat.team !== undefined) {
      // With partners every other seat is on your side or against it: say which.
      const ally = seat.team === state.seats[me].team;
      tags.append(el("span", { class: `badge ${ally ? "partner" : "opponent"}` }, ally ? T.partner : T.opponent));
    }
    who.append(tags);
    head.append(who);
    bits.push(head);
    if (view) {
      const count = view.hand_counts[i];
      bits.push(el("div", { class: "count", html: i === me ? "" : backsSvg(count) },
        el("span", { class: "n" }, fmt(count === 1 ? T.tile_one : T.tiles, { n: count }))));
    }
    // The numbers a seat passed on stay by its name for the whole round, and so do its draws.
    const passed = state.passed && state.passed[i];
    if (passed) bits.push(el("div", { class: "passed" }, passed));
    const drew = view ? (view.draws || []).filter((d) => d.seat === i).reduce((n, d) => n + d.count, 0) : 0;
    if (drew) bits.push(el("div", { class: "drew" }, fmt(drew === 1 ? T.drew_round_one : T.drew_round, { n: drew })));
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
  if (!view) words = state.table.state === "waiting" ? waitingWords() : "";
  else if (state.result) words = "";
  else if (view.turn === me) words = T.your_turn;
  else words = fmt(T.turn_of, { name: seatName(view.turn) });
  if (view && view.boneyard_count) words += ` · ${fmt(T.boneyard, { n: view.boneyard_count })}`;
  text.textContent = words;
  $("turn").classList.toggle("mine", !!view && view.turn === me && !state.result);
  const last = $("last-move");
  const moves = (view && view.moves) || [];
  last.hidden = !moves.length;
  last.textContent = moves.length ? `${T.last_move}: ${moveWords(moves[moves.length - 1], moves.length - 1)}` : "";
  tick();
}

// Every move of the round in words, draws and passes (with their numbers) included.
function renderMoves(view) {
  const box = $("moves");
  box.hidden = !view;
  if (!view) return;
  const items = [];
  const draws = view.draws || [];
  const drawWords = (d) => fmt(d.count === 1 ? T.drew_one : T.drew, { name: seatName(d.seat), n: d.count });
  view.moves.forEach((move, ply) => {
    for (const d of draws.filter((x) => x.before_move === ply)) items.push(el("li", { class: "draw" }, drawWords(d)));
    items.push(el("li", { class: `${move.pass ? "pass" : "play"}${move.by === "table" ? " by-table" : ""}` }, moveWords(move, ply)));
  });
  for (const d of draws.filter((x) => x.before_move >= view.moves.length)) items.push(el("li", { class: "draw" }, drawWords(d)));
  $("moves-count").textContent = String(view.moves.length);
  const list = $("moves-list");
  if (items.length) list.replaceChildren(...items);
  else list.replaceChildren(el("li", { class: "muted" }, T.no_moves));
}

// A quick table counts down to the moment bots take the free seats (the server's fill_at).
function waitingWords() {
  const at = state.table.fill_at;
  if (!at) return T.waiting;
  const left = at - (Date.now() + skew);
  return left > 0 ? fmt(T.waiting_fill, { n: Math.ceil(left / 1000) }) : T.filling;
}

function timeLeft() {
  const clock = state && state.clock;
  if (!clock || !state.view || state.result) return null;
  if (state.table.paused) return clock.paused_left_ms;
  if (!clock.deadline) return null;
  return Math.max(0, clock.deadline - (Date.now() + skew));
}

// Seconds at a live table; days, hours and minutes at a turn-based one.
function leftWords(ms) {
  const s = Math.ceil(ms / 1000);
  if (state.table.pace !== "turn" || s < 60) return `${s} s`;
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  if (d) return fmt(T.days_hours, { d, h });
  if (h) return fmt(T.hours_minutes, { h, m });
  return fmt(T.minutes, { m });
}

// "Next game where it's your move": after a move at a turn-based table, the page asks where
// another game waits for this person, and shows the link (key N) only when there is one.
let nextAsked = null;
async function askNextGame(view, me) {
  const box = $("next-game-box");
  if (!box) return;
  const mine = view && me !== null && view.turn === me && !state.result;
  if (state.table.pace !== "turn" || me === null || mine) { box.hidden = true; return; }
  if (nextAsked === state.version) return;
  nextAsked = state.version;
  try {
    const link = $("next-game");
    const data = await (await fetch(link.dataset.json, { credentials: "same-origin" })).json();
    box.hidden = !data.url;
    if (data.url) link.href = data.url;
  } catch { box.hidden = true; }
}
document.addEventListener("keydown", (e) => {
  if (e.key !== "n" && e.key !== "N") return;
  if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName) || e.target.isContentEditable) return;
  const box = $("next-game-box");
  if (box && !box.hidden) window.location.href = $("next-game").href;
});

function tick() {
  if (!state) return;
  if (!state.view && state.table.state === "waiting" && state.table.fill_at) $("turn-text").textContent = waitingWords();
  const left = timeLeft();
  const clock = state.clock || {};
  const total = Math.max((clock.turn_seconds || 0) * 1000,
    clock.deadline && clock.started ? clock.deadline - clock.started : 0) || 1;
  const frac = left === null ? 0 : Math.max(0, Math.min(1, left / total));
  const secs = left === null ? "" : leftWords(left);
  const low = left !== null && left < 5000;
  const wrap = $("clock");
  wrap.hidden = left === null;
  for (const bar of document.querySelectorAll(".clock-bar, .seat-clock .bar")) {
    bar.style.width = `${(frac * 100).toFixed(2)}%`;
    bar.classList.toggle("low", low);
  }
  for (const node of document.querySelectorAll(".clock-secs, .seat-clock .secs")) node.textContent = secs;
  wrap.setAttribute("aria-label", left === null ? "" : `${T.time_left}: ${secs}`);
  const view = state.view;
  const turnKey = view ? `${state.match ? state.match.number : 0}:${view.round}:${view.moves.length}` : null;
  if (low && !state.table.paused && view && view.turn === state.you.seat && warned !== turnKey) {
    warned = turnKey;
    sound("time");
  }
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
  const base = window.innerWidth < 420 ? 23 : window.innerWidth < 800 ? 26 : 30;
  const scaled = Math.round(base * (TILE_SCALE[PREFS.tile_size] || 1));
  // Seven large tiles still fit one row of a phone.
  return Math.min(scaled, Math.floor((window.innerWidth - 40) / 7.8));
}

// The tiles this seat drew for the turn it is on: new in the hand, marked so.
function justDrawn(view) {
  const mine = (view.draws || []).filter((d) => d.seat === view.seat && d.before_move === view.moves.length);
  const count = mine.reduce((n, d) => n + d.count, 0);
  return new Set(count ? view.hand.slice(-count) : []);
}

function renderHand(view, me) {
  const area = $("hand-area");
  area.hidden = me === null || !view;
  if (area.hidden) { choosing = null; return; }
  const legal = view.legal || [];
  const live = !state.table.paused && !state.result;
  // Your tiles stay easy to read while you wait: only on your turn do the ones that fit stand
  // out (raised) and the others step back; paused or between rounds, none is raised.
  const mine = live && view.turn === me;
  const u = handTileSize();
  const order = orderedHand(view);
  const drawnNow = justDrawn(view);
  const hadFocus = $("hand").contains(document.activeElement);
  if (choosing && !order.includes(choosing.tile)) choosing = null;
  area.classList.toggle("arrange", !!PREFS.arrange_tiles);
  $("hand").replaceChildren(...order.map((tile) => {
    const moves = legal.filter((m) => m.play === tile);
    const ok = moves.length > 0 && mine;
    const cls = `hand-tile${ok ? " legal" : ""}${mine && !ok ? " dim" : ""}${drawnNow.has(tile) ? " drawn" : ""}${choosing && choosing.tile === tile ? " chosen" : ""}`;
    const why = !mine ? "" : ok ? "" : ` (${T.cannot_play})`;
    return el("button", { type: "button", class: `${cls} tile-button`, "data-tile": tile, "aria-disabled": ok ? "false" : "true",
      "aria-label": tileWords(tile) + why, html: tileSvg(tile, u, true),
      tabindex: "-1" });
  }));
  // One tab stop in the hand: the focused tile, else the first legal one, else the first.
  const buttons = [...$("hand").children];
  const stop = buttons.find((b) => b.dataset.tile === focusTile) || buttons.find((b) => b.getAttribute("aria-disabled") === "false") || buttons[0];
  if (stop) stop.tabIndex = 0;
  // Keyboard focus stays in the hand across renders, on the same tile while it is there.
  if (stop && hadFocus) stop.focus();
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
  if (!view || state.result) return;
  if (state.table.paused) { announce(T.paused_wait); setStatus(T.paused_wait, "notice"); return; }
  if (view.turn !== state.you.seat) { announce(fmt(T.turn_of, { name: seatName(view.turn) })); return; }
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

function focusHand() {
  const stop = $("hand").querySelector('.hand-tile[tabindex="0"]');
  if (stop) stop.focus();
}

function playAt(end) {
  if (!choosing) return;
  const { tile } = choosing;
  const fromKeys = $("end-choice").contains(document.activeElement) || $("line").contains(document.activeElement);
  choosing = null;
  sendPlay(tile, end);
  render();
  if (fromKeys) focusHand(); // the end buttons are gone: back to the hand, not to the page top
}

function renderEndChoice(view) {
  const box = $("end-choice");
  box.hidden = !choosing;
  if (!choosing) { box.replaceChildren(); return; }
  box.replaceChildren(el("span", {}, fmt(T.which_end, { tile: tileWords(choosing.tile) })),
    ...choosing.ends.map((end) => el("button", { type: "button", class: "end-button", "data-end": end,
      onclick: () => playAt(end) }, fmt(T.end_label, { end, n: N[view.ends[end]] }))),
    el("button", { type: "button", class: "secondary", onclick: () => { choosing = null; render(); focusHand(); } }, T.cancel));
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
  if (e.key === "Escape") { choosing = null; render(); focusHand(); return; }
  if (at < 0 || !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(e.key)) return;
  e.preventDefault();
  const step = e.key === "ArrowRight" || e.key === "ArrowDown" ? 1 : -1;
  buttons[(at + step + buttons.length) % buttons.length].focus();
});

// Tap plays; a drag (pointer moved more than a few pixels) reorders the hand instead.
let drag = null;
$("hand").addEventListener("pointerdown", (e) => {
  const button = e.target.closest(".hand-tile");
  if (!button || e.button !== 0 || !PREFS.arrange_tiles) return;
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
  // Big enough to count the pips at a glance; one image per hand for screen readers.
  const u = window.innerWidth < 420 ? 16 : 22;
  parts.push(el("ul", { class: "revealed" }, hands.map((hand, i) => el("li", { "data-seat": i },
    el("span", { class: "name" }, seatName(i)),
    el("span", { class: "tiles", role: "img", "aria-label": hand.map(tileWords).join(", ") || T.no_tiles,
      html: hand.map((t) => tileSvg(t, u, false)).join("") }),
    el("span", { class: "hand-pips" }, `${fmt(hand.length === 1 ? T.tile_one : T.tiles, { n: hand.length })} · ${fmt(T.pips, { n: pips[i] })}`)))));
  if (match && match.over) {
    const winner = match.winner !== null && match.winner !== undefined ? names[match.winner] : "";
    parts.push(el("p", { class: "winner" }, fmt(T.winner_is, { name: winner })));
    parts.push(el("p", {}, `${T.final_scores}: `, names.map((n, i) => `${n} ${match.scores[i]}`).join(" · ")));
    // The match can be replayed move by move by its players, and by anyone at a public table.
    if (script.dataset.replay && (state.you.seat !== null || state.table.public)) {
      parts.push(el("p", {}, el("a", { class: "replay-link", href: script.dataset.replay.replace("/matches/0/", `/matches/${match.number}/`) }, T.replay)));
    }
  }
  box.replaceChildren(...parts);
}

// -- watchers --------------------------------------------------------------------------------------

// How many people watch without a seat; a watcher is told they are one.
function renderWatchers() {
  const box = $("watchers");
  if (!box) return;
  const n = state.watchers || 0;
  const parts = [];
  if (state.you.watching) parts.push(T.you_watch);
  if (n) parts.push(fmt(n === 1 ? T.watcher_one : T.watchers, { n }));
  box.hidden = !parts.length;
  box.textContent = parts.join(" · ");
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
    // Seed 002: with bots allowed, a second person is enough; bots take the other seats.
    const people = state.seats.filter((s) => !s.empty && !s.bot).length;
    if (t.allow_bots && people >= 2 && state.seats.some((s) => s.empty)) {
      const button = host("start_with_bots", T.start_with_bots);
      button.title = T.start_with_bots_help;
      buttons.push(button);
    }
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
    // A live match may be adjourned and taken up another day (from My games).
    else if (t.pace !== "turn" && state.match) buttons.push(host("adjourn", T.adjourn, {}, "secondary"));
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
  $("bot-filled").hidden = !state.table.bot_filled;
  if (!closed.hidden) finished = true; // a closed table stays closed: no reconnecting to it
  const paused = $("paused");
  paused.hidden = !state.table.paused || !closed.hidden;
  paused.textContent = state.table.paused_by ? fmt(T.paused_by, { name: state.table.paused_by }) : T.paused;
  if (state.table.state === "adjourned") { paused.hidden = false; paused.textContent = T.adjourned; }
  // Taking or leaving a seat is only for a table that has not started; once the match is on,
  // leaving asks first (#leave-match), and is gone once the person's seat is leaving.
  for (const form of document.querySelectorAll(".seat-form")) form.hidden = state.table.state !== "waiting";
  const leaveMatch = $("leave-match");
  if (leaveMatch) {
    leaveMatch.hidden = !(state.table.state === "playing" && me !== null && !state.seats[me].leaving);
  }
  // The invitation panel is for gathering players: it folds away when the match starts.
  const share = document.querySelector("details.share");
  if (share && tableState === "waiting" && state.table.state !== "waiting") share.open = false;
  tableState = state.table.state;
  renderWatchers();
  renderScores();
  renderSeats(view, me);
  renderTurn(view, me);
  renderHand(view, me);
  renderLine(view);
  renderMoves(view);
  renderLearning(view, me);
  renderResult(view);
  renderHost(view);
  renderRematch(me);
  askNextGame(view, me);
}

// Rematch: once the match is over, any person seated offers it, the others accept.
function renderRematch(me) {
  const box = $("rematch");
  if (!box) return;
  const over = state.table.state === "playing" && state.match && state.match.over;
  box.hidden = !over || me === null;
  if (box.hidden) return;
  const offer = state.table.rematch;
  const accepted = offer ? offer.accepted : [];
  const bits = [];
  if (offer) bits.push(el("span", {}, fmt(T.rematch_waiting, { n: accepted.length, total: state.seats.length })));
  if (accepted.includes(me)) bits.push(el("span", { class: "muted" }, T.rematch_you_accepted));
  else bits.push(el("button", { type: "button", "data-action": "rematch", onclick: () => send({ type: "host", action: "rematch" }) }, offer ? T.rematch_accept : T.rematch));
  box.replaceChildren(...bits);
}

// Options (auto-pass, play automatically, learning mode, tile size, speed, sounds, arranging
// tiles): saved on the profile; the page follows them at once.
for (const form of document.querySelectorAll("form.prefs")) {
  form.addEventListener("change", async (e) => {
    const input = e.target;
    const value = input.type === "checkbox" ? input.checked : input.value;
    const body = new FormData();
    body.append("csrfmiddlewaretoken", form.querySelector("[name=csrfmiddlewaretoken]").value);
    body.append(input.name, input.type === "checkbox" ? (value ? "1" : "0") : value);
    PREFS[input.name] = value;
    // The same option may show in two places (the hand and the options panel).
    for (const twin of document.querySelectorAll(`form.prefs [name="${input.name}"]`)) {
      if (twin !== input) { if (twin.type === "checkbox") twin.checked = value; else twin.value = value; }
    }
    lastLine = "";
    render();
    if (input.name === "sounds" && value) sound("place"); // what they will hear, and a touch to allow it
    try {
      const response = await fetch(form.action, { method: "POST", body, credentials: "same-origin" });
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
