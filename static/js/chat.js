// The table page's chat box and report buttons. table.js owns the socket: it exposes
// window.dominoTable = {send(message), onState(callback)} and calls every callback with each
// state it renders. Protocol: docs/protocol.md ("Chat and reports", "Quick phrases").
const T = JSON.parse(document.getElementById("chat-strings").textContent);
const $ = (id) => document.getElementById(id);
const fmt = (s, params = {}) => s.replace(/%\((\w+)\)s/g, (_m, k) => String(params[k] ?? ""));

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== false && value != null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) if (child != null) node.append(child);
  return node;
}

let state = null;
let seen = -1;

function render(next) {
  state = next;
  const chat = state.chat || [];
  const list = $("chat-list");
  const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.replaceChildren(...chat.map((m) => el("li", { "data-id": m.id, class: m.phrase ? "phrase-line" : false },
    el("strong", {}, m.name || "?"), ": ", m.text, " ",
    state.you.seat !== null && m.seat !== state.you.seat
      ? el("button", { type: "button", class: "link", title: T.report_message,
        onclick: () => openReport({ message: m.id }) }, "⚑") : null)));
  if (atBottom || chat.length && chat[chat.length - 1].id !== seen) list.scrollTop = list.scrollHeight;
  if (chat.length) seen = chat[chat.length - 1].id;
  const you = state.you || {};
  const input = $("chat-text");
  const muted = you.muted;
  input.disabled = $("chat-send").disabled = !you.can_chat || !!muted;
  $("chat-muted").hidden = !muted;
  $("chat-muted").textContent = muted ? muted.message : "";
  input.placeholder = you.can_chat ? T.placeholder : T.players_only;
  // Quick phrases: players (muted ones too) and, where the host allows it, watchers.
  $("phrases").hidden = !you.can_phrase;
  for (const button of $("phrases").querySelectorAll("button")) button.disabled = !you.can_phrase;
  const seats = $("report-seat");
  seats.replaceChildren(el("option", { value: "" }, T.the_table),
    ...state.seats.filter((s) => !s.empty && !s.bot && s.index !== you.seat)
      .map((s) => el("option", { value: s.index }, s.name)));
  $("report-open").hidden = you.seat === null;
}

let reportTarget = {};

function openReport(target) {
  reportTarget = target;
  $("report-form").hidden = false;
  $("report-seat").disabled = !!target.message;
  $("report-reason").focus();
}

function init() {
  const api = window.dominoTable;
  if (!api) return;
  api.onState(render);
  $("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("chat-text").value.trim();
    if (!text) return;
    api.send({ type: "chat", text });
    $("chat-text").value = "";
  });
  $("phrases").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-phrase]");
    if (button && !button.disabled) api.send({ type: "phrase", phrase: button.dataset.phrase });
  });
  $("report-open").addEventListener("click", () => openReport({}));
  $("report-cancel").addEventListener("click", () => { $("report-form").hidden = true; });
  $("report-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const message = { type: "report", reason: $("report-reason").value, note: $("report-note").value };
    if (reportTarget.message) message.message = reportTarget.message;
    else if ($("report-seat").value !== "") message.seat = Number($("report-seat").value);
    api.send(message);
    $("report-form").hidden = true;
    $("report-note").value = "";
    $("chat-muted").hidden = false;
    $("chat-muted").textContent = T.reported;
  });
}

if (window.dominoTable) init();
else window.addEventListener("domino-table-ready", init, { once: true });
export { fmt };
