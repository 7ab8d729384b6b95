// The profile's "Notify me on this device": only this click asks the browser's permission
// (never a page load). The subscription goes to the site, which pushes through the browser's
// push service (apps/notifications/push.py); "Stop notifying this device" takes it back.
const box = document.getElementById("push-box");
const on = document.getElementById("push-on");
const off = document.getElementById("push-off");
const status = document.getElementById("push-status");
const csrf = document.querySelector("input[name=csrfmiddlewaretoken]").value;

function key(base64url) {
  const padded = (base64url + "===".slice((base64url.length + 3) % 4))
    .replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

async function post(url, body) {
  const response = await fetch(url, {
    method: "POST", credentials: "same-origin", body: JSON.stringify(body),
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
  });
  return response.json();
}

function shown(subscribed) {
  on.hidden = subscribed;
  off.hidden = !subscribed;
}

async function registration() {
  await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  return navigator.serviceWorker.ready;
}

async function turnOn() {
  on.disabled = true;
  try {
    const permission = await Notification.requestPermission();
    if (permission !== "granted") { status.textContent = box.dataset.denied; return; }
    const reg = await registration();
    const sub = await reg.pushManager.subscribe({
      userVisibleOnly: true, applicationServerKey: key(box.dataset.key) });
    const answer = await post(box.dataset.subscribe, sub.toJSON());
    status.textContent = answer.message;
    shown(answer.ok);
  } catch (e) {
    status.textContent = box.dataset.failed;
  } finally {
    on.disabled = false;
  }
}

async function turnOff() {
  const reg = await registration();
  const sub = await reg.pushManager.getSubscription();
  if (sub) {
    const answer = await post(box.dataset.unsubscribe, { endpoint: sub.endpoint });
    await sub.unsubscribe();
    status.textContent = answer.message;
  }
  shown(false);
}

if (!("serviceWorker" in navigator) || !("PushManager" in window)
    || !("Notification" in window)) {
  on.disabled = true;
  status.textContent = box.dataset.unsupported;
} else {
  on.addEventListener("click", turnOn);
  off.addEventListener("click", turnOff);
  // Already subscribed here? Asks nothing: reading the subscription needs no permission.
  navigator.serviceWorker.getRegistration("/").then((reg) => reg && reg.pushManager
    .getSubscription()).then((sub) => shown(Boolean(sub))).catch(() => {});
}
