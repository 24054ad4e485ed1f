// The transcript's "expand all" and "collapse all": every turn (and what it holds) opened or closed at once.
// Inlined by the static transcript and replay pages, served as a file by oriole view.
"use strict";
(() => {
  function openAll(open) {
    for (const details of document.querySelectorAll("#conversation details")) details.open = open;
  }
  const expand = document.getElementById("expand-all");
  const collapse = document.getElementById("collapse-all");
  if (expand) expand.addEventListener("click", () => openAll(true));
  if (collapse) collapse.addEventListener("click", () => openAll(false));
})();

// A turn that says where it is (data-src: oriole view, for experiments of any length) is read when it is first
// opened, by a click, "expand all" or the replay reaching it; what arrives is the server's escaped HTML.
(() => {
  async function fill(details) {
    if (!details.dataset.src || details.dataset.loaded) return;
    details.dataset.loaded = "loading";
    const answer = await fetch(details.dataset.src);
    if (answer.ok) {
      details.insertAdjacentHTML("beforeend", await answer.text());
      details.dataset.loaded = "yes";
    } else {
      const note = document.createElement("p");
      note.className = "meta";
      note.textContent = "this turn could not be read (" + answer.status + "): open it again to retry";
      details.append(note);
      delete details.dataset.loaded;
    }
  }
  document.addEventListener("toggle", event => {
    const details = event.target;
    if (details instanceof HTMLDetailsElement && details.classList.contains("turn") && details.open) fill(details);
  }, true);
})();
