// The animation's controls, shared by the static animation page (render.animation_html inlines it) and `oriole view`'s
// experiment page (served as a file under its Content-Security-Policy). It reads the run from the JSON block
// #run-data and the maze's SVG (fog tiles with data-seen, marks with data-step, the #agent frame), and writes only
// text (textContent) and attributes: whatever a model wrote stays text.
"use strict";
(() => {
  const run = JSON.parse(document.getElementById("run-data").textContent);
  const total = run.steps.length;
  const slider = document.getElementById("slider");
  const goto = document.getElementById("goto");
  slider.max = total;
  if (goto) goto.max = total;
  const fog = Array.from(document.querySelectorAll(".fog rect"), el => [el, Number(el.dataset.seen)]);
  const marks = Array.from(document.querySelectorAll("#maze [data-step]"), el => [el, Number(el.dataset.step)]);
  const agent = document.getElementById("agent");
  const end = run.centres[total];
  let step = 0, timer = null, shownTurn = null;

  function showTurn(turnNumber) {
    if (turnNumber === shownTurn) return;
    shownTurn = turnNumber;
    for (const turn of document.querySelectorAll("#conversation details.turn")) {
      const current = turn.dataset.turn === String(turnNumber);
      turn.classList.toggle("current", current);
      if (current) {
        turn.open = true;
        turn.scrollIntoView({block: "nearest"});
      }
    }
  }

  function show(k) {
    step = Math.max(0, Math.min(total, Number.isFinite(k) ? k : 0));
    slider.value = step;
    if (goto && document.activeElement !== goto) goto.value = step;
    document.getElementById("counter").textContent = "step " + step + " of " + total;
    for (const [el, seen] of fog) el.style.display = (seen >= 0 && seen <= step) ? "none" : "";
    for (const [el, at] of marks) el.style.display = at <= step ? "" : "none";
    agent.setAttribute("transform", "translate(" + (run.centres[step][0] - end[0]) + "," +
                       (run.centres[step][1] - end[1]) + ")");
    if (history.replaceState) history.replaceState(null, "", "#step-" + step);
    const action = document.getElementById("action");
    if (step === 0) {
      action.textContent = "start";
      action.className = "";
      document.getElementById("reasoning").textContent = "";
      document.getElementById("model-text").textContent = "";
      return;
    }
    const s = run.steps[step - 1];
    showTurn(s.turn);
    action.textContent = "step " + s.n + " (turn " + s.turn + "): " + s.action + " from (" + s.from.join(", ") +
      ") to (" + s.to.join(", ") + ")" + (s.success ? "" : " failed: " + (s.error || ""));
    action.className = s.success ? "" : "failed";
    document.getElementById("reasoning").textContent = s.reasoning || "";
    document.getElementById("model-text").textContent = run.modelText[String(s.turn)] || "";
  }

  function playing(on) {
    document.getElementById("icon-play").style.display = on ? "none" : "inline";
    document.getElementById("icon-pause").style.display = on ? "inline" : "none";
    document.getElementById("play").setAttribute("aria-pressed", on ? "true" : "false");
  }
  function pause() { clearInterval(timer); timer = null; playing(false); }
  function play() {
    if (step >= total) show(0);
    playing(true);
    timer = setInterval(() => { show(step + 1); if (step >= total) pause(); },
                        Number(document.getElementById("speed").value));
  }
  document.getElementById("play").onclick = () => (timer ? pause() : play());
  document.getElementById("first").onclick = () => { pause(); show(0); };
  document.getElementById("prev").onclick = () => { pause(); show(step - 1); };
  document.getElementById("next").onclick = () => { pause(); show(step + 1); };
  document.getElementById("last").onclick = () => { pause(); show(total); };
  document.getElementById("speed").onchange = () => { if (timer) { pause(); play(); } };
  slider.oninput = () => { pause(); show(Number(slider.value)); };
  if (goto) goto.onchange = () => { pause(); show(Math.round(Number(goto.value))); };
  document.addEventListener("keydown", e => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    if (e.key === "ArrowRight") { pause(); show(step + 1); }
    else if (e.key === "ArrowLeft") { pause(); show(step - 1); }
    else if (e.key === "Home") { pause(); show(0); }
    else if (e.key === "End") { pause(); show(total); }
    else if (e.key === " " && !(e.target instanceof HTMLButtonElement)) { e.preventDefault(); timer ? pause() : play(); }
  });
  const linked = /^#step-(\d+)$/.exec(location.hash);
  show(linked ? Number(linked[1]) : 0);
})();
