// The replay page: a finished match, move by move. The server sends the match's record (the
// download's) and every position the rules engine went through (all hands, open ends, running
// scores); this page only steps through them. The line is drawn by board.js, as on the table.

import { endNumbers, endsBefore, fmt, lineSvg, tileSvg, tileWords as wordsOf } from "./board.js";

const T = JSON.parse(document.getElementById("replay-strings").textContent);
const R = JSON.parse(document.getElementById("replay-data").textContent);
const N = T.numbers;
const $ = (id) => document.getElementById(id);
const tileWords = (t) => wordsOf(t, N);
const rounds = R.record.rounds;
const lists = new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" });

// Where the page is: round r, after `ply` moves of it (0: as dealt).
let r = 0;
let ply = 0;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "html") node.innerHTML = value;
    else if (value !== false && value != null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null && child !== "") node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const movesOf = (k) => rounds[k].moves;
const position = () => R.steps[r][ply];
const pips = (hand) => hand.reduce((sum, t) => sum + t.split("-").map(Number).reduce((a, b) => a + b, 0), 0);

function seatName(seat, k = r) {
  return R.seats[k][seat] || "";
}

function sideNames(k = r) {
  if (R.partners) return [0, 1].map((t) => `${seatName(t, k)} & ${seatName(t + 2, k)}`);
  return R.seats[k].map((_n, i) => seatName(i, k));
}

// Who made a move, when it was not the seat's own player: the table for a person (their time
// ran out) or a bot standing in for them. "ana played six-one (played by ana)" said nothing,
// and a bot's own seat is named as a bot already.
function byWords(move, k = r) {
  const name = seatName(move.seat, k);
  // A pass the table writes is either the preset's own (nothing fitted) or time running out.
  if (move.by === "table") return fmt(move.pass ? T.by_table_pass : T.by_table, { name });
  if (move.by === "bot" && !R.bots[k][move.seat]) return fmt(T.by_standin, { name });
  return "";
}

function moveWords(move, i, k = r) {
  const name = seatName(move.seat, k);
  if (move.pass) {
    const view = { moves: movesOf(k) };
    const nums = endNumbers(endsBefore(view, R.preset, i));
    return nums.length ? fmt(T.passed_on, { name, numbers: lists.format(nums.map((v) => N[v])) })
      : fmt(T.passed, { name });
  }
  return fmt(T.played, { name, tile: tileWords(move.play) });
}

function renderScores() {
  const pos = position();
  const names = sideNames();
  const items = pos.scores.map((score, i) => el("li", { "data-side": i },
    el("span", { class: "side" }, names[i]), " ", el("strong", { class: "score" }, score),
    R.sides && pos.games.some((g) => g) ? el("span", { class: "games" }, ` · ${fmt(T.games_won, { n: pos.games[i] })}`) : ""));
  $("replay-scores").replaceChildren(
    el("span", { class: "round" }, fmt(T.round_of, { n: r + 1, total: rounds.length })),
    el("ul", { class: "score-list", "aria-label": T.scores }, items));
}

function renderLine() {
  const box = $("replay-line");
  const moves = movesOf(r).slice(0, ply);
  const view = { moves, ends: position().ends };
  const plays = moves.map((m, i) => ({ ...m, i })).filter((m) => m.play);
  const width = Math.max(240, box.clientWidth || 320);
  const drawn = lineSvg(view, { preset: R.preset, strings: T, width,
    last: plays.length ? plays[plays.length - 1].i : null,
    byTable: new Set(plays.filter((m) => m.by === "table").map((m) => m.i)) });
  if (!drawn) { box.replaceChildren(el("p", { class: "empty-line" }, T.empty_line)); return; }
  box.innerHTML = drawn.svg;
  box.setAttribute("aria-description", drawn.tiles.map(tileWords).join(", "));
}

function renderHands() {
  const pos = position();
  const u = window.innerWidth < 420 ? 16 : 22;
  const moves = movesOf(r);
  const turn = ply < moves.length ? moves[ply].seat : null;
  $("replay-hands").replaceChildren(...pos.hands.map((hand, i) => el("li", { "data-seat": i, "data-pips": pips(hand), class: i === turn ? "turn" : "" },
    el("span", { class: "name" }, seatName(i)),
    el("span", { class: "tiles", role: "img", "aria-label": hand.map(tileWords).join(", ") || T.no_tiles,
      html: hand.map((t) => tileSvg(t, u, false)).join("") }),
    el("span", { class: "hand-pips" }, `${fmt(hand.length === 1 ? T.tile_one : T.tiles, { n: hand.length })} · ${fmt(T.pips, { n: pips(hand) })}`))));
}

function renderMoves() {
  const moves = movesOf(r);
  $("replay-moves").replaceChildren(...moves.map((move, i) => {
    const item = el("li", { class: `${move.pass ? "pass" : "play"}${i === ply - 1 ? " current" : ""}`,
      "aria-current": i === ply - 1 ? "step" : false },
    el("button", { type: "button", class: "link", "data-ply": i + 1 }, moveWords(move, i)),
    ...(byWords(move) ? [" ", el("span", { class: "muted" }, `(${byWords(move)})`)] : []));
    return item;
  }));
  const current = $("replay-moves").querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
}

function resultWords() {
  const result = R.results[r];
  if (!result) return "";
  const winner = result.winner;
  if (!winner) return `${T.round_over}: ${T.nobody_scores}`;
  const side = winner.team !== undefined ? winner.team : winner.seat;
  return `${T.round_over}: ${fmt(T.scored, { name: sideNames()[side], n: result.points })}`;
}

function render() {
  const moves = movesOf(r);
  const page = $("replay-where");
  page.dataset.round = r;
  page.dataset.ply = ply;
  page.dataset.end = ply === moves.length ? "1" : "0";
  page.textContent = `${fmt(T.round_of, { n: r + 1, total: rounds.length })} · ${ply ? fmt(T.step, { n: ply, total: moves.length }) : T.start}`;
  const last = ply ? moves[ply - 1] : null;
  const by = last ? byWords(last) : "";
  $("replay-move").textContent = last ? `${moveWords(last, ply - 1)}${by ? ` (${by})` : ""}` : "";
  const over = ply === moves.length;
  $("replay-result").hidden = !over;
  $("replay-result").textContent = over ? resultWords() : "";
  renderScores();
  renderLine();
  renderHands();
  renderMoves();
  $("replay-first").disabled = $("replay-prev").disabled = r === 0 && ply === 0;
  $("replay-prev-round").disabled = r === 0;
  const atEnd = r === rounds.length - 1 && over;
  $("replay-last").disabled = $("replay-next").disabled = atEnd;
  $("replay-next-round").disabled = r === rounds.length - 1;
  // The review (review.js) marks the moves drawn here and says the current one's verdict.
  document.dispatchEvent(new CustomEvent("replay:render", { detail: { round: r, ply } }));
}

function go(k, p) {
  r = Math.max(0, Math.min(rounds.length - 1, k));
  ply = Math.max(0, Math.min(movesOf(r).length, p));
  render();
}

function next() {
  if (ply < movesOf(r).length) go(r, ply + 1);
  else if (r < rounds.length - 1) go(r + 1, 0);
}

function previous() {
  if (ply > 0) go(r, ply - 1);
  else if (r > 0) go(r - 1, movesOf(r - 1).length);
}

$("replay-first").addEventListener("click", () => go(0, 0));
$("replay-prev-round").addEventListener("click", () => go(ply > 0 ? r : r - 1, 0));
$("replay-prev").addEventListener("click", previous);
$("replay-next").addEventListener("click", next);
$("replay-next-round").addEventListener("click", () => go(r + 1, 0));
$("replay-last").addEventListener("click", () => go(rounds.length - 1, movesOf(rounds.length - 1).length));
// Another part of the page (the review's chart and lists) moves the replay to a move.
document.addEventListener("replay:go", (e) => go(e.detail.round, e.detail.ply));
$("replay-moves").addEventListener("click", (e) => {
  const button = e.target.closest("button[data-ply]");
  if (button) go(r, Number(button.dataset.ply));
});

document.addEventListener("keydown", (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, select, textarea")) return;
  const keys = { ArrowRight: next, ArrowLeft: previous, Home: () => go(0, 0),
    End: () => go(rounds.length - 1, movesOf(rounds.length - 1).length),
    PageDown: () => go(r + 1, 0), PageUp: () => go(ply > 0 ? r : r - 1, 0) };
  const action = keys[e.key];
  if (!action) return;
  e.preventDefault();
  action();
});

let resizeTimer = null;
window.addEventListener("resize", () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(render, 120); });

render();
