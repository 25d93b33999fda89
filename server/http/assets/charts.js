// Line charts as inline SVG (no libraries, nothing from the network).
//   LmCharts.lineChart(container, {series: [{name, color, points: [{x, y}]}], xLabel, yLabel})
// Replaces the container's content. The <svg> carries data-points (the number of points
// drawn, all series together); each <polyline> carries data-series and data-points.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const W = 520, H = 250, M = { l: 52, r: 14, t: 12, b: 36 };

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }

  // About `count` round tick values covering [lo, hi].
  function ticks(lo, hi, count) {
    if (!(hi > lo)) { const d = Math.abs(lo) * 0.1 || 1; lo -= d; hi += d; }
    const raw = (hi - lo) / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return { lo: Math.min(lo, out[0]), hi: Math.max(hi, out[out.length - 1]), values: out };
  }

  function fmt(v) {
    const a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1e5 || a < 1e-3) return v.toExponential(1);
    if (a >= 100) return v.toFixed(0);
    return +v.toPrecision(3) + "";
  }

  function lineChart(container, opts) {
    container.textContent = "";
    const series = (opts.series || []).map((s) => ({
      ...s,
      points: (s.points || []).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)),
    })).filter((s) => s.points.length > 0);
    const total = series.reduce((n, s) => n + s.points.length, 0);
    if (total === 0) {
      const div = document.createElement("div");
      div.className = "nodata";
      div.textContent = opts.empty || "No data yet";
      container.appendChild(div);
      container.dataset.points = "0";
      return;
    }
    const xs = series.flatMap((s) => s.points.map((p) => p.x));
    const ys = series.flatMap((s) => s.points.map((p) => p.y));
    const tx = ticks(Math.min(...xs), Math.max(...xs), 6);
    const ty = ticks(Math.min(...ys), Math.max(...ys), 5);
    const sx = (x) => M.l + ((x - tx.lo) / (tx.hi - tx.lo)) * (W - M.l - M.r);
    const sy = (y) => H - M.b - ((y - ty.lo) / (ty.hi - ty.lo)) * (H - M.t - M.b);

    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "chart-svg",
                            "data-points": total });
    el("title", {}, svg).textContent = opts.title || "";
    const grid = el("g", { class: "grid" }, svg);
    const axis = el("g", { class: "axis" }, svg);
    for (const v of ty.values) {
      el("line", { x1: M.l, x2: W - M.r, y1: sy(v), y2: sy(v) }, grid);
      el("text", { x: M.l - 6, y: sy(v) + 4, "text-anchor": "end" }, axis).textContent = fmt(v);
    }
    for (const v of tx.values) {
      el("line", { x1: sx(v), x2: sx(v), y1: H - M.b, y2: H - M.b + 4 }, axis);
      el("text", { x: sx(v), y: H - M.b + 17, "text-anchor": "middle" }, axis).textContent = fmt(v);
    }
    el("line", { x1: M.l, x2: W - M.r, y1: H - M.b, y2: H - M.b }, axis);
    if (opts.xLabel) {
      el("text", { x: W - M.r, y: H - 4, "text-anchor": "end" }, axis).textContent = opts.xLabel;
    }
    for (const s of series) {
      const pts = s.points.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ");
      el("polyline", { points: pts, fill: "none", stroke: s.color, "stroke-width": 2,
                       "stroke-linejoin": "round", "data-series": s.name,
                       "data-points": s.points.length }, svg);
      if (s.points.length <= 60 || s.markers) {
        for (const p of s.points) {
          const c = el("circle", { cx: sx(p.x), cy: sy(p.y), r: 3, fill: s.color }, svg);
          el("title", {}, c).textContent = `${s.name} @ ${opts.xLabel || "x"} ${p.x}: ${fmt(p.y)}`;
        }
      }
    }
    container.appendChild(svg);
    const legend = document.createElement("div");
    legend.className = "legend";
    for (const s of series) {
      const span = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = s.color;
      span.appendChild(swatch);
      const last = s.points[s.points.length - 1];
      span.appendChild(document.createTextNode(`${s.name} (${fmt(last.y)})`));
      legend.appendChild(span);
    }
    container.appendChild(legend);
    container.dataset.points = String(total);
  }

  window.LmCharts = { lineChart, fmt };
})();
