// The board as SVG markup: tiles, the line laid out as a snake, the all-fives spinner's arms and
// the end markers. Pure functions of what they are given (a seat view, the preset, the page's
// strings, the ends being picked, a width), no DOM and no page state, so that every page that
// shows a line (the table, the replay) draws it the same way.

export const halves = (t) => t.split("-").map(Number);
export const fmt = (s, params = {}) => s.replace(/%\((\w+)\)s/g, (_m, k) => String(params[k] ?? ""));
export const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// "six-four" from "6-4"; numbers are the number words, "blank" .. "six".
export const tileWords = (t, numbers) => halves(t).map((v) => numbers[v]).join("-");

// Pip spots in a half, on a 3x3 grid (column, row).
export const SPOTS = [[], [[1, 1]], [[0, 0], [2, 2]], [[0, 0], [1, 1], [2, 2]],
  [[0, 0], [2, 0], [0, 2], [2, 2]], [[0, 0], [2, 0], [1, 1], [0, 2], [2, 2]],
  [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]]];

export function pipsMarkup(v, x, y, u, turned) {
  const r = u * 0.095;
  return SPOTS[v].map(([c, w]) => {
    const [i, j] = turned ? [w, c] : [c, w];
    return `<circle cx="${(x + u * (0.25 + i * 0.25)).toFixed(1)}" cy="${(y + u * (0.25 + j * 0.25)).toFixed(1)}" r="${r.toFixed(1)}"/>`;
  }).join("");
}

// One tile with its first half `a` on the left (across) or on top (upright). `attrs` is extra
// markup for its group (data attributes), already escaped.
export function tileMarkup(a, b, x, y, u, upright, cls = "", attrs = "") {
  const w = upright ? u : 2 * u;
  const h = upright ? 2 * u : u;
  const divider = upright
    ? `<line x1="${x + u * 0.12}" y1="${y + u}" x2="${x + u * 0.88}" y2="${y + u}"/>`
    : `<line x1="${x + u}" y1="${y + u * 0.12}" x2="${x + u}" y2="${y + u * 0.88}"/>`;
  const second = upright ? [x, y + u] : [x + u, y];
  return `<g class="tile ${cls}"${attrs ? ` ${attrs}` : ""}><rect x="${x + 0.5}" y="${y + 0.5}" width="${w - 1}" height="${h - 1}" rx="${(u * 0.16).toFixed(1)}"/>${divider}<g class="pips">${pipsMarkup(a, x, y, u, upright)}${pipsMarkup(b, second[0], second[1], u, upright)}</g></g>`;
}

// A tile on its own, as an inline SVG (hands, revealed hands).
export function tileSvg(name, u, upright = true, cls = "") {
  const [a, b] = halves(name);
  const w = upright ? u : 2 * u;
  const h = upright ? 2 * u : u;
  return `<svg class="tile-svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" aria-hidden="true" focusable="false">${tileMarkup(a, b, 0, 0, u, upright, cls)}</svg>`;
}

// Backs of another seat's tiles: only how many.
export function backsSvg(count) {
  const w = 7;
  const h = 12;
  const width = Math.max(1, count) * (w + 2);
  let rects = "";
  for (let i = 0; i < count; i += 1) rects += `<rect x="${i * (w + 2) + 0.5}" y="0.5" width="${w}" height="${h}" rx="1.5"/>`;
  return `<svg class="backs" viewBox="0 0 ${width} ${h + 1}" width="${width}" height="${h + 1}" aria-hidden="true">${rects}</svg>`;
}

// -- the line ---------------------------------------------------------------------------------

// The arms of the line from the moves: A and B around the first tile, C and D from the all-fives
// spinner. Each tile is written [inner, outer, ply] from where its arm starts (ply: its index in
// view.moves); the first tile's ply is firstPly.
export function arms(view, preset) {
  const plays = view.moves.map((m, ply) => ({ ...m, ply })).filter((m) => m.play);
  if (!plays.length) return null;
  const [x, y] = halves(plays[0].play);
  const out = { first: [x, y], firstPly: plays[0].ply, A: [], B: [], C: [], D: [], spinner: null };
  const ends = { A: x, B: y, C: null, D: null };
  const fives = preset === "all-fives";
  if (fives && x === y) out.spinner = { arm: "first", value: x };
  for (const move of plays.slice(1)) {
    const end = move.end || "B";
    const [p, q] = halves(move.play);
    let inner = ends[end];
    if (inner === null || inner === undefined) inner = out.spinner ? out.spinner.value : p;
    const outer = p === inner ? q : p;
    out[end].push([inner, outer, move.ply]);
    ends[end] = outer;
    if (fives && !out.spinner && p === q && (end === "A" || end === "B")) {
      out.spinner = { arm: end, index: out[end].length - 1, value: p };
    }
  }
  return out;
}

// The open ends before move `ply` of view.moves, as the engine keeps them ({} before the first
// tile): A and B, and C and D once tiles touch both long sides of the all-fives spinner (they
// show the spinner's number until played on). What a pass at that move was a pass on.
export function endsBefore(view, preset, ply) {
  const fives = preset === "all-fives";
  const ends = {};
  let spinner = null;
  let open = [false, false]; // which long sides of the spinner are still untouched
  let touches = 0;
  for (const move of view.moves.slice(0, ply)) {
    if (!move.play) continue;
    const [p, q] = halves(move.play);
    if (ends.A === undefined) {
      ends.A = p; ends.B = q;
      if (fives && p === q) { spinner = p; open = [true, true]; }
      continue;
    }
    const end = move.end || (ends.A === p || ends.A === q ? "A" : "B");
    ends[end] = ends[end] === p ? q : p;
    const side = end === "A" ? 0 : end === "B" ? 1 : -1;
    if (!fives || side < 0) continue;
    if (spinner === null) {
      if (p === q) { spinner = p; open[side] = true; touches = 1; }
    } else if (open[side]) {
      open[side] = false;
      touches += 1;
      if (touches === 2) { ends.C = spinner; ends.D = spinner; }
    }
  }
  return ends;
}

// The distinct numbers of a set of ends, high to low (as passes are written).
export function endNumbers(ends) {
  return [...new Set(Object.values(ends))].sort((a, b) => b - a);
}

// Lay a sequence of items (tiles and end markers) left to right as a snake: rows alternate
// direction and turn at the edges, so the line never runs off the board.
export function snake(items, width, u, top) {
  const gap = Math.max(2, Math.round(u * 0.12));
  const pad = 4;
  const rowH = 2 * u + gap * 3;
  let row = 0;
  let dir = 1;
  let x = pad;
  const placed = [];
  for (const item of items) {
    if (dir === 1 && x + item.w > width - pad && x > pad) { row += 1; dir = -1; x = width - pad; }
    else if (dir === -1 && x - item.w < pad && x < width - pad) { row += 1; dir = 1; x = pad; }
    const left = dir === 1 ? x : x - item.w;
    placed.push({ ...item, x: left, y: top + row * rowH + (2 * u - item.h) / 2, dir });
    x += dir * (item.w + gap);
  }
  // One short row: centre it.
  if (row === 0 && placed.length) {
    const last = placed[placed.length - 1];
    const shift = Math.max(0, (width - (last.x + last.w) - pad) / 2);
    for (const p of placed) p.x += shift;
  }
  return { placed, height: (row + 1) * rowH };
}

export function lineItems(seq, u, endName, startName) {
  const items = [];
  const marker = (end) => ({ kind: "end", end, w: Math.round(u * 1.5), h: Math.round(u * 1.5) });
  if (startName) items.push(marker(startName));
  for (const t of seq) {
    const dbl = t.a === t.b;
    items.push({ kind: "tile", a: t.a, b: t.b, dbl, spinner: t.spinner, first: t.first, ply: t.ply,
      w: dbl ? u : 2 * u, h: dbl ? 2 * u : u });
  }
  if (endName) items.push(marker(endName));
  return items;
}

// One placed item. `choosing` is {tile, ends} while the player picks an end, else null: those
// ends' markers become buttons. marks: {last: ply of the move to highlight, byTable: Set of
// plies the table played}.
export function itemMarkup(item, view, strings, choosing = null, marks = {}) {
  const N = strings.numbers;
  if (item.kind === "tile") {
    // In the snake, a tile placed in a right-to-left row shows its halves swapped, so touching
    // halves meet; the cross's arms give their halves already in drawing order.
    const [a, b] = item.drawn || item.dir === 1 ? [item.a, item.b] : [item.b, item.a];
    const upright = item.upright ?? item.dbl;
    const last = item.ply !== undefined && item.ply === marks.last;
    const byTable = item.ply !== undefined && marks.byTable && marks.byTable.has(item.ply);
    const cls = `${item.first ? "first" : ""}${item.spinner ? " spinner" : ""}${last ? " last" : ""}${byTable ? " by-table" : ""}`;
    const attrs = item.ply !== undefined ? `data-ply="${item.ply}"` : "";
    return tileMarkup(a, b, item.x, item.y, Math.min(item.w, item.h), upright, cls, attrs);
  }
  const end = item.end;
  const value = view.ends[end];
  const open = value !== undefined;
  const pick = choosing && choosing.ends.includes(end);
  const r = item.w / 2;
  const cx = item.x + r;
  const cy = item.y + r;
  const label = open ? fmt(strings.end_label, { end, n: N[value] }) : end;
  const attrs = pick ? `role="button" tabindex="0" data-end="${end}" aria-label="${esc(fmt(strings.play_at, { tile: tileWords(choosing.tile, N), end }))}"`
    : `role="img" aria-label="${esc(label)}"`;
  return `<g class="end-marker${pick ? " pick" : ""}${open ? "" : " closed"}" ${attrs}><circle cx="${cx}" cy="${cy}" r="${r - 1}"/><text x="${cx}" y="${cy}" dy="0.35em">${end}</text>${open ? `<text class="end-value" x="${cx + r * 0.85}" y="${cy - r * 0.7}" dy="0.35em">${value}</text>` : ""}</g>`;
}

// The cross of an all-fives line around its spinner, as players lay it: the spinner across the
// middle, the tiles towards A to its left and towards B to its right (turning up and down at the
// edges of the board), C straight up from the spinner and D straight down. Returns placed items
// and the arms' threads, in coordinates that start at the top of the board.
function cross(seq, built, view, width, u) {
  const gap = Math.max(2, Math.round(u * 0.12));
  const pad = 4;
  const s = seq.findIndex((t) => t.spinner);
  const mk = (end) => ({ kind: "end", end, w: Math.round(u * 1.5), h: Math.round(u * 1.5) });
  const tile = (a, b, ply, along, extra = {}) => {
    const dbl = a === b;
    // Across a horizontal run a tile lies flat and a double stands; along a vertical run the
    // other way round.
    const upright = along === "h" ? dbl : !dbl;
    return { kind: "tile", a, b, dbl, ply, upright, drawn: true, w: upright ? u : 2 * u,
      h: upright ? 2 * u : u, ...extra };
  };
  // The spinner sits where both horizontal arms fit when they can (else each gets a share of
  // the width as long as it is), never so near an edge that C and D crowd a turned arm.
  const runs = [seq.slice(0, s), seq.slice(s + 1)].map((part) => part.reduce(
    (sum, t) => sum + gap + (t.a === t.b ? u : 2 * u), gap + Math.round(u * 1.5)));
  const room = width - 2 * pad - u;
  const share = runs[0] + runs[1] <= room ? (runs[0] + (room - runs[0] - runs[1]) / 2) / room
    : runs[0] / (runs[0] + runs[1]);
  const cx = Math.round(pad + u / 2 + room * Math.min(0.75, Math.max(0.25, share)));
  const sp = seq[s];
  const placed = [{ ...tile(sp.a, sp.b, sp.ply, "h", { spinner: true, first: sp.first }), x: cx - u / 2, y: -u }];
  const threads = [];
  // Walk one arm from the spinner: items laid along `dir` until the edge, then along `turn`.
  const walk = (items, dir, turn) => {
    let x0 = dir === "left" ? cx - u / 2 : dir === "right" ? cx + u / 2 : cx;
    let y0 = dir === "up" ? -u : dir === "down" ? u : 0;
    let d = dir;
    let line = dir === "left" || dir === "right" ? 0 : cx; // the run's centre line
    const points = [[cx, 0]];
    let prev = placed[0]; // the spinner
    for (const raw of items) {
      let item = raw.kind === "end" ? raw : raw.make(d === "left" || d === "right" ? "h" : "v");
      const horizontal = d === "left" || d === "right";
      const past = d === "left" ? x0 - gap - item.w < pad : d === "right" ? x0 + gap + item.w > width - pad : false;
      if (horizontal && past && turn) {
        d = turn;
        // The new column keeps to the board with room for a double lying across it.
        line = dir === "left" ? Math.max(prev.x + u / 2, pad + u)
          : Math.min(prev.x + prev.w - u / 2, width - pad - u);
        x0 = line;
        y0 = d === "up" ? prev.y : prev.y + prev.h;
        if (raw.kind !== "end") item = raw.make("v");
      }
      let x;
      let y;
      if (d === "left") { x = x0 - gap - item.w; y = line - item.h / 2; x0 = x; }
      else if (d === "right") { x = x0 + gap; y = line - item.h / 2; x0 = x + item.w; }
      else if (d === "up") { x = line - item.w / 2; y = y0 - gap - item.h; y0 = y; }
      else { x = line - item.w / 2; y = y0 + gap; y0 = y + item.h; }
      prev = { ...item, x, y };
      placed.push(prev);
      points.push([x + item.w / 2, y + item.h / 2]);
    }
    threads.push(points);
  };
  const toA = seq.slice(0, s).reverse().map((t) => ({ make: (along) => tile(t.a, t.b, t.ply, along, { first: t.first }) }));
  const toB = seq.slice(s + 1).map((t) => ({ make: (along) => tile(t.a, t.b, t.ply, along, { first: t.first }) }));
  walk([...toA, mk("A")], "left", "up");
  walk([...toB, mk("B")], "right", "down");
  const open = view.ends.C !== undefined;
  walk([...built.C.map(([inner, outer, ply]) => ({ make: (along) => tile(outer, inner, ply, along) })),
    ...(open ? [mk("C")] : [])], "up", null);
  walk([...built.D.map(([inner, outer, ply]) => ({ make: (along) => tile(inner, outer, ply, along) })),
    ...(open ? [mk("D")] : [])], "down", null);
  const top = Math.min(...placed.map((p) => p.y)) - pad;
  const bottom = Math.max(...placed.map((p) => p.y + p.h)) + pad;
  for (const p of placed) p.y -= top;
  return { placed, height: bottom - top, threads: threads.map((pts) => pts.map(([x, y]) => [x, y - top])) };
}

// The whole line of a view as one SVG, `width` pixels wide: {svg, tiles, arms} where tiles are the
// main line's tiles in reading order ("a-b" from end A to end B) and arms {C, D} the spinner's
// arms' tiles from the spinner out; null before the first tile.
// opts: {preset, strings, choosing, width, last (ply of the move to highlight), byTable (Set of
// plies the table played)}.
export function lineSvg(view, { preset, strings, choosing = null, width, last = null, byTable = null }) {
  const built = view && arms(view, preset);
  if (!built) return null;
  const total = view.moves.filter((m) => m.play).length;
  // Bigger tiles while the line is short, smaller as it grows (at most 3-4 rows); always within
  // the width.
  const perRow = Math.max(6, Math.min(14, Math.ceil((total + 2) / (width < 500 ? 4 : 3))));
  let u = Math.floor((width - 8) / (perRow * 2.3));
  u = Math.max(14, Math.min(u, width < 500 ? 22 : 28));
  const seq = [];
  const spin = built.spinner;
  built.A.slice().reverse().forEach(([inner, outer, ply], i) => {
    seq.push({ a: outer, b: inner, ply, spinner: spin && spin.arm === "A" && spin.index === built.A.length - 1 - i });
  });
  seq.push({ a: built.first[0], b: built.first[1], ply: built.firstPly, first: true, spinner: spin && spin.arm === "first" });
  built.B.forEach(([inner, outer, ply], i) => seq.push({ a: inner, b: outer, ply,
    spinner: spin && spin.arm === "B" && spin.index === i }));
  const marks = { last, byTable };
  const armWords = { C: built.C.map(([i, o]) => `${i}-${o}`), D: built.D.map(([i, o]) => `${i}-${o}`) };
  if (spin) {
    const laid = cross(seq, built, view, width, u);
    const threads = laid.threads.filter((pts) => pts.length > 1).map((pts) => `<polyline class="thread" points="${pts.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ")}"/>`);
    const height = Math.ceil(laid.height);
    const svg = `<svg class="board-svg cross" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="group" aria-label="${esc(strings.line)}">${threads.join("")}${laid.placed.map((p) => itemMarkup(p, view, strings, choosing, marks)).join("")}</svg>`;
    return { svg, tiles: seq.map((t) => `${t.a}-${t.b}`), arms: armWords };
  }
  const main = snake(lineItems(seq, u, "B", "A"), width, u, 4);
  const parts = [];
  let height = main.height + 4;
  let placed = main.placed;
  for (const end of ["C", "D"]) {
    if (view.ends[end] === undefined && !built[end].length) continue;
    const arm = snake(lineItems(built[end].map(([a, b]) => ({ a, b })), u, end, null),
      width, u, height + u * 0.6);
    parts.push(`<text class="arm-label" x="6" y="${height + u * 0.35}">${esc(fmt(strings.spinner_arm, { end }))}</text>`);
    placed = placed.concat(arm.placed);
    height += arm.height + u * 0.6;
  }
  // A faint thread through the tiles shows the reading order around the turns.
  const centres = main.placed.map((p) => `${(p.x + p.w / 2).toFixed(1)},${(p.y + p.h / 2).toFixed(1)}`);
  const thread = `<polyline class="thread" points="${centres.join(" ")}"/>`;
  const svg = `<svg class="board-svg" viewBox="0 0 ${width} ${Math.ceil(height)}" width="${width}" height="${Math.ceil(height)}" role="group" aria-label="${esc(strings.line)}">${thread}${parts.join("")}${placed.map((p) => itemMarkup(p, view, strings, choosing, marks)).join("")}</svg>`;
  return { svg, tiles: seq.map((t) => `${t.a}-${t.b}`), arms: armWords };
}
