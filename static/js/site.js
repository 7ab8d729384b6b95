// Every page: the language switcher submits on change. A script file, not an onchange
// attribute, so the Content-Security-Policy needs no 'unsafe-inline'.
const select = document.getElementById("language-select");
if (select) select.addEventListener("change", () => select.form.submit());

// The installed app's service worker (apps/notifications/pwa.py): pushes and the offline
// page. Registering asks nothing of the person; only "Notify me on this device" does.
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {});
}

// The bell (signed-in pages): its count kept live over ws/me/, the person's socket. Every
// notice heard there is passed on to the page as a "me-notice" event (the home page's
// invitations), so a page opens one such socket.
const bell = document.getElementById("bell");

function showCount(unread) {
  if (!bell) return;
  const count = bell.querySelector(".bell-count");
  count.textContent = String(unread);
  count.hidden = unread <= 0;
  bell.classList.toggle("has-unread", unread > 0);
  bell.setAttribute("aria-label", unread > 0
    ? bell.dataset.labelSome.replace("%(count)s", String(unread)) : bell.dataset.labelNone);
}

// After a reconnect the count is read again: a ring lost while the socket was down is not.
async function refreshCount() {
  try {
    const response = await fetch(bell.dataset.countUrl, { credentials: "same-origin" });
    if (response.ok) showCount((await response.json()).unread);
  } catch (e) { /* the next notice or reconnect tells */ }
}

let delay = 1000;
let opened = false;
function openSocket() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}/ws/me/`);
  ws.onopen = () => {
    delay = 1000;
    if (opened && bell) refreshCount();
    opened = true;
  };
  ws.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type !== "notice") return;
    if (msg.event.kind === "bell") showCount(msg.event.unread);
    window.dispatchEvent(new CustomEvent("me-notice", { detail: msg.event }));
  };
  ws.onclose = (e) => {
    if (e.code === 4401 || e.code === 4403) return; // signed out, or the account is banned
    setTimeout(openSocket, delay);
    delay = Math.min(delay * 2, 30000);
  };
}
// The table page has a socket of its own, which hears the same notices: the bell still
// needs ws/me/ there, since the table socket's page script does not draw it.
if (bell || document.getElementById("live-notices")) openSocket();
