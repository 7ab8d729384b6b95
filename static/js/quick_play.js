// "Play now": the number of players shows only for the games that leave it open. Without JS
// it always shows, and the four-player games ignore it on the server.
const form = document.getElementById("quick-play");
if (form) {
  const fourOnly = (form.dataset.fourOnly || "").split(" ");
  const preset = form.querySelector("[name=preset]");
  const players = form.querySelector(".quick-players");
  const update = () => { players.hidden = fourOnly.includes(preset.value); };
  preset.addEventListener("change", update);
  update();
}
