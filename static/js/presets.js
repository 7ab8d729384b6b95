// Under each game menu ({% preset_about %}): only the chosen game's line, which the menu is
// described by. Without JS every game's line shows, each with its name. A module runs once per
// page however many menus include it.
for (const list of document.querySelectorAll(".preset-about[data-for]")) {
  const select = document.getElementById(list.dataset.for);
  if (!select) continue;
  list.classList.add("one");
  const described = (select.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
  select.setAttribute("aria-describedby", [...described, list.id].join(" "));
  const update = () => {
    for (const item of list.children) item.hidden = item.dataset.preset !== select.value;
  };
  select.addEventListener("change", update);
  update();
}
