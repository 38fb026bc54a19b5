// The XO page: polls the server's JSON and draws it. Every value from the volume is set as
// text (textContent), never as markup: the volume is written by units the XO does not trust.
"use strict";

const POLL_MS = 2000;
const SVG = "http://www.w3.org/2000/svg";
const token = new URLSearchParams(location.search).get("token");
let selected = null;

function api(path) {
  const url = new URL(path, location.href);
  if (token) url.searchParams.set("token", token);
  return fetch(url, { cache: "no-store" }).then(r => r.json().then(body => {
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }));
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return "-";
  const s = Math.floor(seconds);
  if (s < 120) return s + "s";
  if (s < 7200) return Math.floor(s / 60) + "m";
  if (s < 172800) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}

function cls(value) {
  return /^[a-z_]+$/.test(value || "") ? value : "";
}

function unitRow(u) {
  const tr = el("tr", undefined, "unit" + (u.unit === selected ? " selected" : ""));
  tr.dataset.unit = u.unit;
  const name = el("td");
  name.append(el("span", u.unit));
  if (u.paused) name.append(" ", el("span", "paused", "badge paused"));
  tr.append(name, el("td", u.role || "-"), el("td", u.pace || "-", cls(u.pace)), el("td", u.health, cls(u.health)));
  tr.append(el("td", age(u.age_seconds) + (u.freshness ? " (" + u.freshness.replace("_", " ") + ")" : ""), cls(u.freshness)));
  tr.append(el("td", u.error ? u.error : (u.degraded ? "heartbeat only: " + u.degraded : (u.state || "-")), u.error ? "error" : ""));
  const s = u.last_steering;
  const last = el("td");
  if (s) {
    last.append(el("div", [s.kind || s.event, s.anomaly, s.severity, s.where].filter(Boolean).join(" · ")));
    if (s.text) last.append(el("div", s.text, "text"));
  } else {
    last.textContent = "-";
  }
  tr.append(last, el("td", s && s.outcome ? s.outcome : "-"));
  tr.addEventListener("click", () => { selected = u.unit; showEvents(u.unit); refresh(); });
  return tr;
}

function drawChart(chart) {
  const holder = document.getElementById("chart");
  const width = 720, height = 160, pad = 24;
  const bars = chart.bars;
  const top = Math.max(1, ...bars.map(b => b.steering + b.block + b.pause));
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("role", "img");
  const total = bars.reduce((n, b) => n + b.steering + b.block + b.pause, 0);
  const title = document.createElementNS(SVG, "title");
  title.textContent = `steering over time: ${total} in all`;
  svg.append(title);
  const step = (width - 2 * pad) / bars.length;
  bars.forEach((bar, i) => {
    let y = height - pad;
    for (const kind of ["steering", "block", "pause"]) {
      if (!bar[kind]) continue;
      const h = (height - 2 * pad) * bar[kind] / top;
      y -= h;
      const rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", pad + i * step + 1);
      rect.setAttribute("y", y);
      rect.setAttribute("width", Math.max(step - 2, 1));
      rect.setAttribute("height", h);
      rect.setAttribute("class", "bar k-" + kind);
      const tip = document.createElementNS(SVG, "title");
      tip.textContent = `${bar[kind]} ${kind}`;
      rect.append(tip);
      svg.append(rect);
    }
  });
  const label = (x, y, text, anchor) => {
    const t = document.createElementNS(SVG, "text");
    t.setAttribute("x", x); t.setAttribute("y", y); t.setAttribute("text-anchor", anchor);
    t.textContent = text;
    svg.append(t);
  };
  const start = new Date(chart.start);
  label(pad, height - 6, start.toLocaleTimeString(), "start");
  label(width - pad, height - 6, "now", "end");
  label(pad, 14, `max ${top} per ${Math.round(chart.bar_seconds)}s`, "start");
  const legend = el("div", undefined, "legend");
  for (const kind of ["steering", "block", "pause"]) {
    const item = el("span");
    item.append(el("span", "", "key k-" + kind), kind);
    legend.append(item);
  }
  holder.replaceChildren(svg, legend);
}

function showEvents(unit) {
  api("api/events?unit=" + encodeURIComponent(unit)).then(doc => {
    document.getElementById("unit-events").hidden = false;
    document.getElementById("events-unit").textContent = unit;
    const body = document.querySelector("#events tbody");
    const rows = doc.events.slice().reverse().map(e => {
      const tr = el("tr");
      tr.append(el("td", new Date(e.time).toLocaleString()), el("td", e.type), el("td", e.turn ?? "-"),
                el("td", e.anomaly || (e.findings || []).join(", ") || "-"), el("td", e.template || "-"));
      return tr;
    });
    body.replaceChildren(...(rows.length ? rows : [el("tr")]));
    if (!rows.length) body.firstChild.append(el("td", "no events of this unit yet"));
  }).catch(err => { document.getElementById("events-unit").textContent = unit + " (" + err.message + ")"; });
}

function refresh() {
  return api("api/units").then(doc => {
    document.querySelector("#units tbody").replaceChildren(...doc.units.map(unitRow));
    document.getElementById("summary").textContent =
      `${doc.units.length} unit(s), ${doc.paused} paused · updated ${new Date(doc.generated_at).toLocaleTimeString()}`;
    drawChart(doc.chart);
    document.body.dataset.updated = doc.generated_at;
  }).catch(err => {
    document.getElementById("summary").textContent = "cannot update: " + err.message;
  });
}

refresh();
setInterval(() => { refresh(); if (selected) showEvents(selected); }, POLL_MS);
