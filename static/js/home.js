// Home page: live invitations over ws/me/ (the list itself is server-rendered).
const script = document.querySelector("script[data-invited]");
const box = document.getElementById("live-notices");
let delay = 1000;
function open() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}/ws/me/`);
  ws.onopen = () => { delay = 1000; };
  ws.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type !== "notice" || msg.event.kind !== "invitation") return;
    const p = document.createElement("p");
    p.className = "banner";
    p.textContent = script.dataset.invited.replace("%(code)s", msg.event.code) + " ";
    const a = document.createElement("a");
    a.href = `/t/${msg.event.code}/`;
    a.textContent = script.dataset.open;
    p.append(a);
    box.append(p);
  };
  ws.onclose = (e) => {
    if (e.code === 4401 || e.code === 4403) return; // signed out, or the account is banned
    setTimeout(open, delay);
    delay = Math.min(delay * 2, 30000);
  };
}
if (box) open();
