// Create-table form: show only the options the chosen game has. Without JS every field shows
// and the server refuses an option the game does not have, with the reason.
const form = document.getElementById("create-table");
if (form) {
  const only = {
    players: ["draw", "block", "all-fives", "tranca"],
    hand_size: ["tranca"],
    best_of: ["pairs-series"],
    tie: ["pairs-series"],
  };
  const bots = form.querySelector("[name=allow_bots]");
  const update = () => {
    const preset = form.querySelector("[name=preset]").value;
    for (const [name, presets] of Object.entries(only)) {
      const field = form.querySelector(`[name=${name}]`).closest(".field");
      const on = presets.includes(preset);
      field.hidden = !on;
      if (!on) form.querySelector(`[name=${name}]`).value = "";
    }
    for (const name of ["bot_level", "bot_think_ms"]) {
      form.querySelector(`[name=${name}]`).closest(".field").hidden = !bots.checked;
    }
    document.querySelectorAll(".preset-help [data-preset]").forEach((el) => {
      el.classList.toggle("current", el.dataset.preset === preset);
    });
  };
  form.querySelector("[name=preset]").addEventListener("change", update);
  bots.addEventListener("change", update);
  update();
}
