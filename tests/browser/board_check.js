// Run by tests/browser/test_board.py in Chromium: board.js against the engine's figures.
// One function of [base URL, cases, strings]; returns {problems, crosses}.
(async ([base, cases, strings]) => {
  const board = await import(base + "/static/js/board.js");
  const box = document.getElementById("box");
  const problems = [];
  let crosses = 0;
  for (const [n, c] of cases.entries()) {
    c.before.forEach((ends, ply) => {
      const mine = board.endsBefore(c.view, c.preset, ply);
      if (JSON.stringify(mine, Object.keys(mine).sort()) !== JSON.stringify(ends, Object.keys(ends).sort()))
        problems.push(`case ${n} ply ${ply}: ends ${JSON.stringify(mine)} != ${JSON.stringify(ends)}`);
    });
    for (const view of [c.partial, c.view]) {
      const plays = view.moves.map((m, i) => [m, i]).filter(([m]) => m.play).map(([, i]) => i);
      for (const width of [240, 358, 700]) {
        const drawn = board.lineSvg(view, {preset: c.preset, strings, width, last: plays[plays.length - 1]});
        if (!drawn) { if (plays.length) problems.push(`case ${n}: no line`); continue; }
        box.innerHTML = drawn.svg;
        const svg = box.querySelector("svg");
        if (svg.classList.contains("cross")) crosses += 1;
        const tiles = [...svg.querySelectorAll(".tile")];
        const seen = tiles.map((t) => Number(t.dataset.ply)).sort((a, b) => a - b);
        if (JSON.stringify(seen) !== JSON.stringify(plays)) problems.push(`case ${n} w${width}: plies ${seen} != ${plays}`);
        if (svg.querySelectorAll(".tile.last").length !== 1) problems.push(`case ${n} w${width}: last not marked once`);
        const boxes = [...tiles, ...svg.querySelectorAll(".end-marker circle")].map((node) => node.getBBox());
        const height = Number(svg.getAttribute("height"));
        boxes.forEach((b, i) => {
          if (b.x < -0.5 || b.x + b.width > width + 0.5 || b.y < -0.5 || b.y + b.height > height + 0.5)
            problems.push(`case ${n} w${width}: item ${i} outside the board`);
          for (const o of boxes.slice(i + 1)) {
            const overlap = Math.min(b.x + b.width, o.x + o.width) - Math.max(b.x, o.x) > 0.6
              && Math.min(b.y + b.height, o.y + o.height) - Math.max(b.y, o.y) > 0.6;
            if (overlap) problems.push(`case ${n} w${width}: items overlap`);
          }
        });
        const spinner = svg.querySelector(".tile.spinner");
        if (svg.classList.contains("cross")) {
          const s = spinner.getBBox();
          const built = board.arms(view, c.preset);
          for (const [end, above] of [["C", true], ["D", false]]) {
            for (const [, , ply] of built[end]) {
              const t = svg.querySelector(`.tile[data-ply="${ply}"]`).getBBox();
              const ok = above ? t.y + t.height <= s.y + 0.5 : t.y >= s.y + s.height - 0.5;
              const inColumn = Math.abs(t.x + t.width / 2 - (s.x + s.width / 2)) < 1;
              if (!ok || !inColumn) problems.push(`case ${n} w${width}: ${end} tile off its arm`);
            }
          }
        }
      }
    }
  }
  return {problems: problems.slice(0, 20), crosses};
})
