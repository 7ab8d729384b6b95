// Every page: the language switcher submits on change. A script file, not an onchange
// attribute, so the Content-Security-Policy needs no 'unsafe-inline'.
const select = document.getElementById("language-select");
if (select) select.addEventListener("change", () => select.form.submit());
