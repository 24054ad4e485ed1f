// A sweep's page follows the sweep while it runs: every few seconds it reads the sweep's progress (JSON from the
// same server) and writes the counts and the experiment rows as text. Nothing read is ever parsed as markup.
"use strict";
(() => {
  const section = document.getElementById("progress");
  if (!section) return;
  const url = section.dataset.progressUrl;
  const fast = Number(section.dataset.pollSeconds) * 1000;
  const text = (id, value) => { document.getElementById(id).textContent = value; };
  const money = value => "$" + value.toLocaleString("en-US", {minimumFractionDigits: 4, maximumFractionDigits: 4});

  function cell(row, value, className) {
    const td = row.insertCell();
    td.textContent = value;
    if (className) td.className = className;
    return td;
  }

  function rows(experiments) {
    const body = document.querySelector("#experiment-list tbody");
    const fresh = document.createElement("tbody");
    for (const e of experiments) {
      const row = fresh.insertRow();
      row.dataset.id = String(e.id);
      const link = document.createElement("a");
      link.href = e.link;
      link.textContent = String(e.id);
      cell(row, "", "number").appendChild(link);
      cell(row, e.agent, "agent");
      cell(row, e.maze);
      const ending = cell(row, "");
      const label = document.createElement("span");
      label.className = "ending ending-" + e.ending_code;
      label.textContent = e.ending;
      ending.append(label, " ", e.outcome);
      cell(row, String(e.actions), "number");
      cell(row, e.efficiency, "number");
      cell(row, e.tokens, "number");
      cell(row, e.cost, "number");
      cell(row, e.started, "when");
    }
    body.replaceWith(fresh);
  }

  async function follow() {
    let running = true;
    try {
      const answer = await fetch(url, {headers: {Accept: "application/json"}});
      if (answer.ok) {
        const {status, experiments} = await answer.json();
        text("sweep-done", String(status.done));
        text("sweep-running", String(status.running));
        text("sweep-left", status.left === null ? "-" : String(status.left));
        text("sweep-tokens", status.tokens.toLocaleString("en-US"));
        text("sweep-spent", status.spent + (status.spend_limit === null ? "" : " of " + money(status.spend_limit)));
        text("sweep-outcomes", Object.entries(status.outcomes).map(([words, n]) => n + " " + words).join(", ") ||
             "none yet");
        const bar = document.getElementById("sweep-bar");
        bar.max = status.planned || Math.max(1, status.done + status.running);
        bar.value = status.done;
        rows(experiments);
        running = status.running > 0 || (status.left !== null && status.left > 0);
        text("sweep-live", running ? "running: this page follows it" : "");
      }
    } finally {
      setTimeout(follow, running ? fast : fast * 8);
    }
  }
  setTimeout(follow, fast);
})();
