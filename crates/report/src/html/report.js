// The report's only script: a chart's figures on hover or focus, and the
// legends' check boxes hiding and showing a chart's series. It writes text,
// never markup, and fetches nothing.
(() => {
  "use strict";
  const tip = document.getElementById("tip");
  const show = (el, x, y) => {
    tip.textContent = el.getAttribute("data-tip");
    tip.hidden = false;
    tip.style.left = `${Math.min(x + 14, window.scrollX + document.documentElement.clientWidth - tip.offsetWidth - 8)}px`;
    tip.style.top = `${y + 14}px`;
  };
  const target = (ev) => (ev.target instanceof Element ? ev.target.closest("[data-tip]") : null);
  document.addEventListener("mouseover", (ev) => {
    const el = target(ev);
    if (el) show(el, ev.pageX, ev.pageY);
    else tip.hidden = true;
  });
  document.addEventListener("focusin", (ev) => {
    const el = target(ev);
    if (!el) return;
    const r = el.getBoundingClientRect();
    show(el, r.left + window.scrollX, r.bottom + window.scrollY);
  });
  document.addEventListener("change", (ev) => {
    const box = ev.target;
    if (!(box instanceof HTMLInputElement) || !box.hasAttribute("data-toggle")) return;
    const figure = box.closest("figure");
    const series = box.getAttribute("data-toggle");
    for (const g of figure.querySelectorAll("g[data-series]")) {
      if (g.getAttribute("data-series") === series) g.classList.toggle("off", !box.checked);
    }
  });
})();
