// Tournament page: the live part (#tournament-live: standings or bracket, live tables, rounds)
// is drawn by the server; when the tournament's socket (ws/tournament/<id>/) rings, the page
// fetches that part again and swaps it in. A reconnect fetches it too (a ring may have been
// missed meanwhile). Without a socket (signed out) the page reloads the part every 30 s.
//
// Rings come in bursts (people registering and withdrawing, a round's tables starting): the
// part is fetched at most once every MIN_GAP_MS, and once more after a burst's last ring, so
// the page shows every change without fetching once per change.
const script = document.querySelector("script[data-live]");
const box = document.getElementById("tournament-live");
const FIRST_MS = 250;
const MIN_GAP_MS = 2000;
let delay = 500;
let pending = null;
let lastFetch = -Infinity;

async function refresh() {
  pending = null;
  lastFetch = Date.now();
  try {
    const response = await fetch(script.dataset.live, { credentials: "same-origin" });
    if (!response.ok) return;
    const html = await response.text();
    // Keep what a person is typing in a form (a partner's name) across a refresh.
    const typing = box.contains(document.activeElement) && document.activeElement.name;
    const value = typing ? document.activeElement.value : null;
    box.innerHTML = html;
    if (typing) {
      const again = box.querySelector(`[name="${typing}"]`);
      if (again) { again.value = value; again.focus(); }
    }
  } catch (err) {
    // A network blip: the next ring or reconnect fetches again.
  }
}

function soon() {
  if (pending !== null) return; // the fetch already planned reads this change too
  pending = setTimeout(refresh, Math.max(FIRST_MS, lastFetch + MIN_GAP_MS - Date.now()));
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}${script.dataset.socket}`);
  let ping = null;
  ws.onopen = () => {
    delay = 500; // the server says "changed" first: the page reads what it missed
    ping = setInterval(() => ws.send(JSON.stringify({ type: "ping" })), 25000);
  };
  ws.onmessage = (event) => {
    const msg = JSON.parse(event.data);
    if (msg.type === "changed") soon();
  };
  ws.onclose = (event) => {
    clearInterval(ping);
    if (event.code >= 4400 && event.code < 4500) return; // signed out, or no such tournament
    setTimeout(connect, delay);
    delay = Math.min(delay * 2, 15000);
  };
}

if (box && script) {
  if ("signedIn" in script.dataset) connect();
  else setInterval(refresh, 30000);
}
