// The review of a finished match on its replay page (apps/reviews): ask for it, follow its bar
// (the status JSON, polled about once a second), then mark every move of the replay's list with
// its verdict, say the current move's verdict as the replay steps, and draw the round's expected
// points for the reader's side (an inline SVG) beside the same facts as text.

import { esc, fmt, tileWords as wordsOf } from "./board.js";

const $ = (id) => document.getElementById(id);
const panel = $("review");
const T = JSON.parse($("review-strings").textContent);
const MINE = JSON.parse($("review-mine").textContent);
const R = JSON.parse($("replay-data").textContent);
const N = JSON.parse($("replay-strings").textContent).numbers;
const lang = document.documentElement.lang || "en";
const pointsFmt = new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const percentFmt = new Intl.NumberFormat(lang, { style: "percent", maximumFractionDigits: 0 });
const accuracyFmt = new Intl.NumberFormat(lang, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });
const POLL_MS = 1000;

let review = null;   // the status JSON: status, done, total, message, and once done result, words
let byIndex = [];    // per round: Map(index in the record's round -> the move's verdict)
let where = { round: 0, ply: 0 };
let drawnRound = null;
let pollTimer = null;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (value !== false && value != null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null && child !== "") node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const tileWords = (t) => wordsOf(t, N);
const points = (v) => pointsFmt.format(v);
const seatName = (seat, k) => (R.seats[k] && R.seats[k][seat]) || "";
const sideOf = (seat) => (R.partners ? seat % 2 : seat);
const mySide = (k) => MINE.sides[k] ?? 0;

function sideName(k) {
  const side = mySide(k);
  const seats = R.seats[k].map((_n, i) => i).filter((i) => sideOf(i) === side);
  return seats.length ? seats.map((i) => seatName(i, k)).join(" & ") : T.your_side;
}

// -- words for one verdict -----------------------------------------------------------------

function same(a, b) {
  return Boolean(a.pass) === Boolean(b.pass) && a.play === b.play && (a.end || "") === (b.end || "");
}

function botWords(entry, k) {
  const best = entry.best;
  if (best.pass) return T.bot_passes;
  // The bot's move is written as the view's legal move: an end only where the tile fits more
  // than one way, none on the first tile.
  const before = R.steps[k][entry.index];
  const ends = before ? before.ends || {} : {};
  if (!Object.keys(ends).length) return fmt(T.bot_opens, { tile: tileWords(best.play) });
  if (!best.end || ends[best.end] === undefined) return fmt(T.bot_plays_tile, { tile: tileWords(best.play) });
  return fmt(T.bot_plays, { tile: tileWords(best.play), number: N[ends[best.end]] });
}

function markWords(entry) {
  if (entry.forced) return T.forced;
  if (same(entry.played, entry.best)) return T.agrees;
  const params = { points: points(entry.loss), sure: percentFmt.format(entry.sure) };
  if (entry.mark === "blunder") return fmt(T.blunder, params);
  if (entry.mark === "mistake") return fmt(T.mistake, params);
  if (entry.mark === "inaccuracy") return fmt(T.inaccuracy, params);
  return fmt(T.close, params);
}

function reasonsOf(entry, k) {
  return (review.words && review.words.moves[`${k}:${entry.index}`]) || [];
}

// A judged move's accuracy (apps/bots/accuracy.py: 100 for the bot's move), from the JSON.
function accuracyOf(entry, k) {
  const moves = review.accuracy ? review.accuracy.moves : {};
  const value = moves[`${k}:${entry.index}`];
  return value === undefined ? null : value;
}

const percent = (v) => accuracyFmt.format(v / 100);

function verdictWords(entry, k) {
  const parts = [markWords(entry)];
  const acc = accuracyOf(entry, k);
  if (acc !== null) parts.push(fmt(T.move_accuracy, { accuracy: percent(acc) }));
  if (!entry.forced && !same(entry.played, entry.best)) parts.push(botWords(entry, k));
  parts.push(...reasonsOf(entry, k));
  return parts.join(" ");
}

function symbol(entry) {
  if (entry.forced) return "·";
  if (entry.mark === "blunder") return "??";
  if (entry.mark === "mistake") return "?";
  if (entry.mark === "inaccuracy") return "?!";
  return "✓";
}

// -- the replay's move list and the current move ---------------------------------------------

function decorateMoves() {
  const k = where.round;
  const verdicts = byIndex[k];
  const items = $("replay-moves").children;
  for (let i = 0; i < items.length; i += 1) {
    const li = items[i];
    const move = R.record.rounds[k].moves[i];
    li.classList.toggle("mine", move && move.seat === MINE.seats[k]);
    if (!verdicts || li.querySelector(".verdict")) continue;
    const entry = verdicts.get(i);
    if (!entry) continue;
    const kind = entry.forced ? "forced" : entry.mark || (same(entry.played, entry.best) ? "agrees" : "close");
    li.dataset.verdict = kind;
    const shown = entry.mark ? `${symbol(entry)} −${points(entry.loss)}` : symbol(entry);
    const acc = accuracyOf(entry, k);
    li.append(" ", el("span", { class: `verdict ${kind}` },
      el("span", { "aria-hidden": "true" }, shown),
      el("span", { class: "visually-hidden" }, markWords(entry))));
    if (acc !== null) {
      li.append(" ", el("span", { class: "accuracy", "data-accuracy": acc, title: T.accuracy_title },
        percent(acc)));
    }
    if (!entry.forced && !same(entry.played, entry.best)) {
      li.append(el("span", { class: "bot-choice" }, botWords(entry, k)));
    }
  }
  // The lines added moved the current move: keep it in view, as the replay does.
  const current = $("replay-moves").querySelector(".current");
  if (current && verdicts) current.scrollIntoView({ block: "nearest" });
}

function showVerdict() {
  const k = where.round;
  const line = $("review-verdict");
  const i = where.ply - 1;
  const entry = byIndex[k] && i >= 0 ? byIndex[k].get(i) : null;
  line.className = `review-verdict ${entry ? entry.mark || "" : ""}`;
  if (i < 0) { line.textContent = T.verdict_none; return; }
  const move = R.record.rounds[k].moves[i];
  line.textContent = fmt(T.verdict_of, { n: i + 1, name: seatName(move.seat, k),
    verdict: entry ? verdictWords(entry, k) : T.not_judged });
}

// -- the chart: the round's expected points for the reader's side ---------------------------
// One line per seat of the reader's side (theirs solid, a partner's dashed): each of its moves
// at its place in the round, valued from that seat's own view, as the bot judged it. Other
// seats' values come from other views (other hands), so they are not drawn on these lines.

function chartSvg(k) {
  const moves = (review.result.rounds[k] || { moves: [] }).moves;
  const side = mySide(k);
  const box = $("review-chart");
  const width = Math.max(260, box.clientWidth || 320);
  const height = width < 420 ? 150 : 190;
  const pad = { left: 40, right: 12, top: 12, bottom: 24 };
  const count = R.record.rounds[k].moves.length;
  const ours = moves.filter((m) => sideOf(m.seat) === side);
  const top = Math.max(5, ...ours.map((m) => Math.abs(m.expected_for[side])));
  const x = (i) => pad.left + (count > 1 ? (i * (width - pad.left - pad.right)) / (count - 1) : 0);
  const y = (v) => pad.top + ((top - v) * (height - pad.top - pad.bottom)) / (2 * top);
  const at = (m) => `cx="${x(m.index).toFixed(1)}" cy="${y(m.expected_for[side]).toFixed(1)}"`;
  const parts = [
    `<line class="axis" x1="${pad.left}" y1="${y(0)}" x2="${width - pad.right}" y2="${y(0)}"/>`,
    `<text class="tick" x="${pad.left - 6}" y="${y(top) + 4}" text-anchor="end">+${esc(points(top))}</text>`,
    `<text class="tick" x="${pad.left - 6}" y="${y(0) + 4}" text-anchor="end">0</text>`,
    `<text class="tick" x="${pad.left - 6}" y="${y(-top) + 4}" text-anchor="end">−${esc(points(top))}</text>`,
    `<text class="tick" x="${x(0)}" y="${height - 6}" text-anchor="start">${esc(fmt(T.chart_move, { n: 1 }))}</text>`,
    `<text class="tick" x="${x(count - 1)}" y="${height - 6}" text-anchor="end">${esc(fmt(T.chart_move, { n: count }))}</text>`,
    `<line class="now" id="review-now" x1="0" y1="${pad.top}" x2="0" y2="${height - pad.bottom}" visibility="hidden"/>`,
  ];
  const seats = [...new Set(ours.map((m) => m.seat))].sort((a, b) => (b === MINE.seats[k]) - (a === MINE.seats[k]));
  for (const seat of seats) {
    const own = seat === MINE.seats[k] || MINE.seats[k] == null;
    const line = ours.filter((m) => m.seat === seat)
      .map((m) => `${x(m.index).toFixed(1)},${y(m.expected_for[side]).toFixed(1)}`).join(" ");
    parts.push(`<polyline class="expected${own ? "" : " partner"}" data-seat="${seat}" points="${line}"/>`);
  }
  for (const m of ours) {
    const label = `${fmt(T.chart_move, { n: m.index + 1 })}, ${seatName(m.seat, k)}: ${markWords(m)}`;
    const r = m.mark === "blunder" ? 7 : m.mark === "mistake" ? 6 : m.mark ? 5 : 2.5;
    parts.push(`<circle class="${m.mark ? `mark ${m.mark}` : "dot"}" data-index="${m.index}" ${at(m)} r="${r}"><title>${esc(label)}</title></circle>`);
  }
  box.innerHTML = `<svg class="review-svg" role="img" aria-labelledby="review-chart-title" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">${parts.join("")}</svg>`;
  box.dataset.round = k;
  box.dataset.x = JSON.stringify(Array.from({ length: count }, (_v, i) => Number(x(i).toFixed(1))));
}

function moveNowLine() {
  const now = $("review-now");
  if (!now) return;
  const xs = JSON.parse($("review-chart").dataset.x || "[]");
  const i = where.ply - 1;
  if (i < 0 || i >= xs.length) { now.setAttribute("visibility", "hidden"); return; }
  now.setAttribute("x1", xs[i]);
  now.setAttribute("x2", xs[i]);
  now.setAttribute("visibility", "visible");
}

// -- the round in words ----------------------------------------------------------------------

function drawRound() {
  const k = where.round;
  drawnRound = k;
  $("review-chart-title").textContent = fmt(T.chart_title, { side: sideName(k), n: k + 1 });
  const about = T.chart_about;
  $("review-chart-about").textContent = R.partners ? `${about} ${T.chart_partner}` : about;
  chartSvg(k);
  $("review-summary-title").textContent = fmt(T.summary_title, { n: k + 1 });
  const sentences = (review.words.summary[String(k)]) || {};
  const seats = Object.keys(sentences).map(Number)
    .sort((a, b) => (b === MINE.seats[k]) - (a === MINE.seats[k]) || a - b);
  $("review-summary").replaceChildren(...seats.map((seat) => el("li",
    { class: seat === MINE.seats[k] ? "mine" : "", "data-seat": seat }, sentences[String(seat)].join(" "))));
  $("review-costly-title").textContent = fmt(T.costly_title, { n: k + 1 });
  const costly = [...(byIndex[k] || new Map()).values()].filter((m) => m.mark);
  $("review-costly").replaceChildren(...(costly.length ? costly.map((m) => {
    const played = m.played.pass ? T.passed : tileWords(m.played.play);
    const label = fmt(T.costly_line, { n: m.index + 1, name: seatName(m.seat, k), tile: played,
      mark: T[`mark_${m.mark}`] || T.mark_inaccuracy, points: points(m.loss) });
    return el("li", { class: `${m.mark}${m.seat === MINE.seats[k] ? " mine" : ""}`, "data-index": m.index },
      el("button", { type: "button", class: "link", "data-round": k, "data-ply": m.index + 1 }, label),
      el("span", { class: "bot-choice" }, `${botWords(m, k)} ${reasonsOf(m, k).join(" ")}`));
  }) : [el("li", { class: "none" }, T.no_costly)]));
}

// Each player's accuracy over the whole match (the reader first), under the verdict.
function drawPlayers() {
  const rows = (review.accuracy && review.accuracy.players) || [];
  $("review-players-title").textContent = T.players_title;
  $("review-players").replaceChildren(...rows.map((row) => {
    const counts = [];
    if (row.blunder) counts.push(fmt(T.count_blunders, { n: row.blunder }));
    if (row.mistake) counts.push(fmt(T.count_mistakes, { n: row.mistake }));
    if (row.inaccuracy) counts.push(fmt(T.count_inaccuracies, { n: row.inaccuracy }));
    const text = row.accuracy === null ? fmt(T.player_no_choice, { name: row.name })
      : fmt(T.player_accuracy, { name: row.name, accuracy: percent(row.accuracy), judged: row.judged });
    return el("li", { class: row.mine ? "mine" : "", "data-accuracy": row.accuracy ?? "" },
      counts.length ? `${text} (${counts.join(", ")})` : text);
  }));
}

function renderReview() {
  if (!review || review.status !== "done" || !review.result) return;
  if (drawnRound !== where.round) drawRound();
  decorateMoves();
  showVerdict();
  moveNowLine();
}

// -- asking, and following the bar ----------------------------------------------------------

function show(data) {
  review = data;
  const status = data.status;
  const working = status === "queued" || status === "running";
  $("review-form").hidden = working || status === "done" || (status === "failed" && !data.retry);
  $("review-ask").textContent = status === "failed" ? T.again : T.ask;
  $("review-progress").hidden = !working && status !== "done";
  const bar = $("review-bar");
  bar.max = Math.max(1, data.total);
  bar.value = status === "done" ? bar.max : data.done;
  $("review-progress-text").textContent = data.message || "";
  panel.dataset.state = status;
  $("review-error").hidden = status !== "failed";
  $("review-error").textContent = status === "failed" ? data.message : "";
  if (status === "done" && data.result) {
    byIndex = data.result.rounds.map((rnd) => new Map(rnd.moves.map((m) => [m.index, m])));
    $("review-body").hidden = false;
    drawPlayers();
    drawnRound = null;
    renderReview();
  }
  clearTimeout(pollTimer);
  if (working) pollTimer = setTimeout(poll, POLL_MS);
}

async function poll() {
  try {
    const response = await fetch(panel.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(String(response.status));
    show(await response.json());
  } catch {
    $("review-progress-text").textContent = T.unreachable;
    clearTimeout(pollTimer);
    pollTimer = setTimeout(poll, 3 * POLL_MS);
  }
}

$("review-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const form = e.currentTarget;
  const button = $("review-ask");
  button.disabled = true;
  $("review-error").hidden = true;
  $("review-progress").hidden = false;
  $("review-progress-text").textContent = T.asking;
  try {
    const response = await fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin" });
    const data = await response.json();
    if (!data.ok) {
      $("review-progress").hidden = true;
      $("review-error").textContent = data.message;
      $("review-error").hidden = false;
    } else {
      show(data);
    }
  } catch {
    $("review-progress").hidden = true;
    $("review-error").textContent = T.unreachable;
    $("review-error").hidden = false;
  } finally {
    button.disabled = false;
  }
});

$("review-costly").addEventListener("click", (e) => {
  const button = e.target.closest("button[data-ply]");
  if (!button) return;
  document.dispatchEvent(new CustomEvent("replay:go",
    { detail: { round: Number(button.dataset.round), ply: Number(button.dataset.ply) } }));
});

$("review-chart").addEventListener("click", (e) => {
  const mark = e.target.closest("circle[data-index]");
  if (!mark) return;
  document.dispatchEvent(new CustomEvent("replay:go",
    { detail: { round: where.round, ply: Number(mark.dataset.index) + 1 } }));
});

document.addEventListener("replay:render", (e) => {
  where = e.detail;
  renderReview();
});

let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => { drawnRound = null; renderReview(); }, 150);
});

poll();
