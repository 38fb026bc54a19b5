// The supervision page of the a0_org_kernel plugin: asks the plugin's API (through Agent-Zero,
// with its CSRF token) for what the pack wrote about one chat, and draws it. Every value is
// set as text (textContent), never as markup.
"use strict";

const API = "/api/plugins/a0_org_kernel/supervision";
const POLL_MS = 3000;
const LEVELS = ["primary", "alternate", "contingent", "emergency"];
const SVG = "http://www.w3.org/2000/svg";
const context = new URLSearchParams(location.search).get("context") || "";
let csrf = null;

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function row(cells, cls) {
  const tr = el("tr", undefined, cls);
  for (const cell of cells) tr.append(el("td", cell ?? "-"));
  return tr;
}

async function token() {
  if (csrf) return csrf;
  const r = await fetch("/api/csrf_token", { credentials: "same-origin" });
  const body = await r.json();
  if (!body.ok) throw new Error(body.error || "no CSRF token");
  csrf = body.token;
  return csrf;
}

async function load() {
  const r = await fetch(API, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": await token() },
    body: JSON.stringify({ context }),
  });
  if (r.status === 403) csrf = null;  // a new session: ask for a new token next time
  if (!r.ok) throw new Error(r.status + " " + (await r.text()).slice(0, 200));
  return r.json();
}

function fill(id, rows, empty) {
  const body = document.querySelector(`#${id} tbody`);
  if (rows && rows.error) { body.replaceChildren(row([rows.error], "error")); return; }
  body.replaceChildren(...(rows && rows.length ? rows : [row([empty])]));
}

function drawPace(points) {
  const holder = document.getElementById("pace");
  if (!Array.isArray(points) || !points.length) {
    holder.replaceChildren(el("p", points && points.error ? points.error : "no SALUTE report of this chat yet", "muted"));
    return;
  }
  const width = 720, height = 150, left = 80, pad = 16;
  const first = points[0].turn, last = Math.max(points[points.length - 1].turn, first + 1);
  const x = t => left + (width - left - pad) * (t - first) / (last - first);
  const y = level => height - pad - (height - 2 * pad) * Math.max(LEVELS.indexOf(level), 0) / (LEVELS.length - 1);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const text = (tx, ty, value, anchor) => {
    const t = document.createElementNS(SVG, "text");
    t.setAttribute("x", tx); t.setAttribute("y", ty); t.setAttribute("text-anchor", anchor || "start");
    t.textContent = value;
    svg.append(t);
  };
  LEVELS.forEach(level => text(4, y(level) + 4, level));
  let d = "";
  points.forEach((p, i) => {
    d += (i ? ` H ${x(p.turn)} V ${y(p.pace)}` : `M ${x(p.turn)} ${y(p.pace)}`);
    const dot = document.createElementNS(SVG, "circle");
    dot.setAttribute("cx", x(p.turn)); dot.setAttribute("cy", y(p.pace)); dot.setAttribute("r", 3);
    dot.setAttribute("class", "dot");
    const tip = document.createElementNS(SVG, "title");
    tip.textContent = `turn ${p.turn}: ${p.pace} (${p.health})`;
    dot.append(tip);
    svg.append(dot);
  });
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", d);
  path.setAttribute("class", "line");
  svg.prepend(path);
  text(x(first), height - 2, `turn ${first}`, "start");
  text(width - pad, height - 2, `turn ${points[points.length - 1].turn}`, "end");
  holder.replaceChildren(svg);
}

function render(doc) {
  document.getElementById("summary").textContent =
    doc.chat ? `chat ${doc.chat}` + (doc.project ? `, project ${doc.project}` : ", no project") : "no supervised chat yet";
  drawPace(doc.pace);
  const events = Array.isArray(doc.timeline) ? doc.timeline.slice().reverse().map(e => row([
    new Date(e.time).toLocaleTimeString(), e.turn, e.type, e.anomaly || (e.findings || []).join(", "), e.template, e.followed_by,
  ], e.type)) : doc.timeline;
  fill("timeline", events, "nothing yet: the supervisor has not checked this chat");
  const k = doc.knowledge || {};
  document.getElementById("scope").textContent = k.scope ? `(${k.scope})` : "";
  fill("documents", k.error ? k : (k.documents || []).map(d => {
    const tr = row([d.path, d.quarantined ? "quarantined" : d.status,
                    d.title + (d.hand_written ? " (hand-written)" : "") + (d.quarantined ? ` (held for a person: ${d.why})` : "")]);
    if (d.quarantined) tr.className = "quarantined";
    return tr;
  }), "no knowledge documents");
  fill("directives", k.error ? [] : (k.directives || []).map(d => {
    const tr = row([d.id + (d.quarantined ? " (quarantined)" : ""), d.priority, d.source,
                    d.description + (d.quarantined ? ` (held for a person: ${d.why})` : "")]);
    if (d.quarantined) tr.className = "quarantined";
    return tr;
  }), "no pending directives");
  const doctrine = doc.doctrine || {};
  document.getElementById("role").textContent = doctrine.role ? `(role ${doctrine.role}, organization ${doctrine.organization || "none"})` : "";
  fill("doctrine", doctrine.error ? doctrine : (doctrine.values || []).map(v => row([v.field, JSON.stringify(v.value), v.from])),
       "no doctrine");
  document.body.dataset.updated = new Date().toISOString();
}

function refresh() {
  return load().then(render).catch(err => {
    document.getElementById("summary").textContent = "cannot update: " + err.message;
  });
}

refresh();
setInterval(refresh, POLL_MS);
