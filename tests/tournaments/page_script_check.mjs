// Runs static/js/tournament.js under node with a fake page, socket and clock, and prints what
// it fetched: node page_script_check.mjs SCRIPT. Used by test_page_script.py.
import { pathToFileURL } from "node:url";

let now = 1_000_000;
let timers = [];
let nextId = 1;
globalThis.Date.now = () => now;
globalThis.setTimeout = (fn, ms) => { const id = nextId++; timers.push({ id, at: now + (ms || 0), fn }); return id; };
globalThis.clearTimeout = (id) => { timers = timers.filter((t) => t.id !== id); };
globalThis.setInterval = () => 0;
globalThis.clearInterval = () => {};
const fetched = [];
globalThis.fetch = async () => { fetched.push(now); return { ok: true, text: async () => "" }; };
const sockets = [];
globalThis.WebSocket = class { constructor() { sockets.push(this); } send() {} };
globalThis.location = { protocol: "http:", host: "club.test" };
const box = { innerHTML: "", contains: () => false, querySelector: () => null };
globalThis.document = {
  querySelector: () => ({ dataset: { live: "/tournaments/1/live/", socket: "/ws/tournament/1/", signedIn: "" } }),
  getElementById: () => box,
  activeElement: null,
};

const flush = () => new Promise((resolve) => setImmediate(resolve));
async function advance(ms) {
  const end = now + ms;
  for (;;) {
    timers.sort((a, b) => a.at - b.at);
    const next = timers[0];
    if (!next || next.at > end) break;
    timers.shift();
    now = next.at;
    await next.fn();
    await flush();
  }
  now = end;
}
const ring = () => sockets[0].onmessage({ data: JSON.stringify({ type: "changed" }) });

await import(pathToFileURL(process.argv[2]).href);
const start = now;
ring(); // one change on a quiet page
await advance(5000);
const single = fetched.map((t) => t - start);
fetched.length = 0;
const burst = now;
for (let i = 0; i < 40; i += 1) { ring(); await advance(250); } // 40 changes in 10 s
const lastRing = now - 250;
await advance(5000);
console.log(JSON.stringify({ single, burst: fetched.map((t) => t - burst), lastRing: lastRing - burst }));
