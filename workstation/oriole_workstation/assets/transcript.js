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
