// The practice form: the player count only where the game has a choice. Disabled, the field is
// not sent and the server uses the game's own count; without JS the server refuses a count the
// game does not have, with the reason.
const form = document.getElementById("practice-form");
if (form) {
  const fourOnly = JSON.parse(document.getElementById("practice-four-only").textContent);
  const preset = form.querySelector("[name=preset]");
  const players = form.querySelector("[name=players]");
  const update = () => {
    const fixed = fourOnly.includes(preset.value);
    players.disabled = fixed;
    players.closest(".field").hidden = fixed;
  };
  preset.addEventListener("change", update);
  update();
}
