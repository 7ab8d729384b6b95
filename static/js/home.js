// Home page: live invitations, heard on ws/me/ by site.js (the list itself is server-rendered).
const script = document.querySelector("script[data-invited]");
const box = document.getElementById("live-notices");
if (box) {
  window.addEventListener("me-notice", (e) => {
    const event = e.detail;
    if (event.kind !== "invitation") return;
    const p = document.createElement("p");
    p.className = "banner";
    p.textContent = script.dataset.invited.replace("%(code)s", event.code) + " ";
    const a = document.createElement("a");
    a.href = `/t/${event.code}/`;
    a.textContent = script.dataset.open;
    p.append(a);
    box.append(p);
  });
}
