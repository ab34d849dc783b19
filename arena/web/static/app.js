// arena serve: draws every page from its JSON (/api/...), and keeps it live by asking /api/version every few
// seconds whether new matches landed. No framework; uPlot (vendored) draws the ratings plot.
"use strict";

const POLL_MS = 2000;
const body = document.body;
const main = document.getElementById("main");
const PALETTE = ["#2f5fd0", "#e5484d", "#30a46c", "#f76808", "#8e4ec6", "#0091ff", "#d6409f", "#946800",
                 "#12a594", "#6f6e77", "#3e1f9f", "#a35829"];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  return node;
}

async function getJSON(url, options) {
  const response = await fetch(url, options);
  let data;
  try { data = await response.json(); } catch (e) { data = {error: response.statusText}; }
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

async function getFigure(url, label) {
  // a whole-database figure: the first computation of a big ladder takes a while; ask again until it is in.
  // A figure older than the newest stored match is shown at once, and asked for again on the next poll
  // (the server is recomputing it), even when no further match lands: a finished ladder's page catches up.
  for (;;) {
    const data = await getJSON(url);
    const note = document.getElementById("pending");
    if (!data.pending) {
      if (note) note.remove();
      behind = behind || data.at < data.version;
      return data;
    }
    (note || main.appendChild(el("p", {id: "pending", class: "muted"}))).textContent =
      `computing ${label} over the whole ladder; shown as soon as it is ready...`;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function showError(error) {
  main.replaceChildren(el("h1", {text: document.title.replace(/ - arena$/, "")}),
                       el("p", {class: "error", id: "error", text: String(error.message || error)}));
}

function fmt(x, digits) { return x === null || x === undefined ? "" : Number(x).toFixed(digits); }
function when(ts) { return new Date(ts * 1000).toLocaleString(); }
function botLink(name) { return el("a", {href: "/bot/" + encodeURIComponent(name), text: name}); }

function asOf(data) {
  // the "As of match N" of a whole-database figure, with the data-at the tests wait for
  const text = data.at < data.version ? `As of match ${data.at} (${data.version} stored; updating).`
                                      : `As of match ${data.at}.`;
  return el("span", {class: "as-of", dataset: {at: String(data.at)}, text});
}

// --- live: one poll of /api/version every POLL_MS; pages redraw when it changes, or when a figure shown ---
// --- is behind the newest stored match -----------------------------------------------------------------
let version = null;
let behind = false;
let pollers = [];
function live(redraw) {
  pollers.push(redraw);
  if (pollers.length > 1) return;
  const mark = document.getElementById("live");
  const tick = async () => {
    try {
      const data = await getJSON("/api/version");
      if (mark) mark.textContent = "live: " + data.version + " matches";
      if ((version !== null && data.version !== version) || behind) {
        version = data.version;
        behind = false;
        for (const fn of pollers) await fn();
      }
      version = data.version;
    } catch (e) {
      if (mark) mark.textContent = "server unreachable";
    }
    setTimeout(tick, POLL_MS);
  };
  tick();
}

// --- sortable tables: click a header; the order survives a live redraw --------------------------------
function sortableTable(id, columns, rows, state) {
  // columns: [{key, label, cls, cell(row) -> node|string, value(row) -> sortable}]
  const head = el("tr", {}, columns.map((c) => {
    const th = el("th", {class: (c.cls || "") + (c.value ? " sortable" : ""), text: c.label, title: c.title || null});
    if (state.key === c.key) th.classList.add(state.desc ? "sorted-desc" : "sorted-asc");
    if (c.value) th.addEventListener("click", () => {
      state.desc = state.key === c.key ? !state.desc : false;
      state.key = c.key;
      state.redraw();
    });
    return th;
  }));
  const sorted = rows.slice();
  const column = columns.find((c) => c.key === state.key);
  if (column && column.value) {
    sorted.sort((a, b) => {
      const x = column.value(a), y = column.value(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (state.desc ? -1 : 1);
    });
  }
  const tbody = el("tbody", {}, sorted.map((row) => el("tr", {dataset: {key: row.bot || row.id || ""}},
    columns.map((c) => el("td", {class: c.cls || null}, c.cell ? c.cell(row) : row[c.key])))));
  return el("table", {id}, el("thead", {}, head), tbody);
}

function settingsLine(summary) {
  const items = [["game", summary.title], ["seats", summary.seats], ["bots", summary.bots],
                 ["matches", summary.matches]];
  for (const [k, v] of Object.entries(summary.options || {})) {
    if (v !== null) items.push([k, Array.isArray(v) ? v.join(",") : v]);
  }
  const s = summary.settings;
  if (s) {
    items.push(["deadline", s.deadline + " s"]);
    if (s.time_bank) items.push(["time bank", s.time_bank + " s"]);
    items.push(["max faults", s.max_faults], ["tables", s.tables]);
    if (s.matches !== null) items.push(["budget", s.matches + " matches"]);
    if (s.hours !== null) items.push(["budget", s.hours + " h"]);
  }
  for (const [k, v] of Object.entries(summary.meta || {})) items.push([k.replace(/_/g, " "), v]);
  return el("div", {class: "settings", id: "settings"},
    items.map(([k, v]) => el("span", {dataset: {key: k}}, k + ": ", el("b", {text: String(v)}))));
}

// --- leaderboard -------------------------------------------------------------------------------------
function intervalCell(row, lo, hi) {
  const width = 220, height = 16, pad = 4;
  const s = svg("svg", {width, height, class: "interval"});
  if (row.estimate === null) return s;  // no match yet
  const x = (v) => pad + (hi > lo ? (v - lo) / (hi - lo) : 0.5) * (width - 2 * pad);
  s.append(svg("line", {x1: x(row.low), x2: x(row.high), y1: 8, y2: 8, stroke: "#2f5fd0", "stroke-width": 3,
                        "stroke-linecap": "round"}));
  s.append(svg("circle", {cx: x(row.estimate), cy: 8, r: 4, fill: "#1d2330"}));
  const title = svg("title", {});
  title.textContent = `estimate ${row.estimate} (95% interval ${row.low} .. ${row.high})`;
  s.append(title);
  return s;
}

async function pageBoard() {
  const state = {key: "rank", desc: false};
  let data = null;
  state.redraw = () => {
    const fitted = data.rows.filter((r) => r.estimate !== null);
    const lo = Math.min(...fitted.map((r) => r.low)), hi = Math.max(...fitted.map((r) => r.high));
    const columns = [
      {key: "rank", label: "rank", value: (r) => r.rank},
      {key: "ranks", label: "ranks", value: (r) => r.rank, cell: (r) => r.ranks,
       title: "the ranks the bot may hold: a range where it is not separated from a neighbour"},
      {key: "bot", label: "bot", cls: "bot", cell: (r) => botLink(r.bot), value: (r) => r.bot},
      {key: "interval", label: "estimate, 95% interval", cls: "left", cell: (r) => intervalCell(r, lo, hi),
       value: (r) => r.estimate},
      {key: "estimate", label: "estimate", cell: (r) => fmt(r.estimate, 2), value: (r) => r.estimate},
      {key: "matches", label: "matches", value: (r) => r.matches},
      {key: "decided", label: "decided", cell: (r) => (r.decided ? "yes" : "no"), value: (r) => +r.decided},
      {key: "mu", label: "TS mu", cell: (r) => fmt(r.mu, 2), value: (r) => r.mu},
      {key: "sigma", label: "TS sigma", cell: (r) => fmt(r.sigma, 2), value: (r) => r.sigma},
      {key: "raw_wins", label: "raw wins", value: (r) => r.raw_wins},
      {key: "raw_points", label: "raw points", cell: (r) => fmt(r.raw_points, 1), value: (r) => r.raw_points},
      {key: "faults", label: "faults", value: (r) => r.faults},
      {key: "median_ms", label: "lat p50 ms", cell: (r) => fmt(r.median_ms, 2), value: (r) => r.median_ms},
      {key: "p99_ms", label: "lat p99 ms", cell: (r) => fmt(r.p99_ms, 2), value: (r) => r.p99_ms},
    ];
    main.replaceChildren(el("h1", {text: "Leaderboard"}), settingsLine(data.summary),
      sortableTable("board", columns, data.rows, state),
      el("p", {class: "muted"}, asOf(data), " Ranked by a batch fit over every stored match (the " +
        "same matches in any order give the same board), with 95% intervals from a bootstrap over deal sets; " +
        "TS mu and sigma are the online TrueSkill rating; raw wins and points are not adjusted for the " +
        "opponents met; click a column to sort."));
  };
  const load = async () => { data = await getFigure("/api/board", "the leaderboard"); state.redraw(); };
  await load();
  live(load);
}

// --- ratings over time ---------------------------------------------------------------------------------
function bandsPlugin(bands) {
  // fills mu -/+ 3 sigma of every shown series, under the lines
  return {hooks: {drawSeries: [(u, index) => {
    const band = bands[index - 1];
    if (!band || !u.series[index].show) return;
    const ctx = u.ctx, xs = u.data[0];
    const upper = [], lower = [];
    for (let i = 0; i < xs.length; i++) {
      if (band.mu[i] === null) continue;
      const x = u.valToPos(xs[i], "x", true);
      upper.push([x, u.valToPos(band.mu[i] + 3 * band.sigma[i], "y", true)]);
      lower.push([x, u.valToPos(band.mu[i] - 3 * band.sigma[i], "y", true)]);
    }
    if (!upper.length) return;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    ctx.beginPath();
    upper.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
    lower.reverse().forEach(([x, y]) => ctx.lineTo(x, y));
    ctx.closePath();
    ctx.globalAlpha = 0.12;
    ctx.fillStyle = band.colour;
    ctx.fill();
    ctx.restore();
  }]}};
}

async function pageRatings() {
  const box = el("div", {class: "plot", id: "ratings-plot"});
  main.replaceChildren(el("h1", {text: "Ratings over time"}), box,
    el("p", {class: "muted", text: "Each bot's mu after every match it played, against the ladder's match " +
      "count; the band is mu -/+ 3 sigma. Click a name to hide it."}));
  const draw = async () => {
    const data = await getFigure("/api/ratings", "the ratings history");
    const bands = data.bots.map((b, i) => ({mu: b.mu, sigma: b.sigma, colour: PALETTE[i % PALETTE.length]}));
    const options = {
      width: Math.min(1200, window.innerWidth - 80), height: 480,
      scales: {x: {time: false}},
      axes: [{label: "matches"}, {label: "mu"}],
      series: [{label: "match"}, ...data.bots.map((b, i) => ({label: b.bot, stroke: PALETTE[i % PALETTE.length],
                                                                width: 2, spanGaps: false}))],
      plugins: [bandsPlugin(bands)],
    };
    if (window.arenaRatingsPlot) window.arenaRatingsPlot.destroy();
    box.replaceChildren();
    window.arenaRatingsPlot = new uPlot(options, [data.x, ...data.bots.map((b) => b.mu)], box);
    box.dataset.series = String(data.bots.length);
    box.dataset.at = String(data.at);
    box.dataset.bots = JSON.stringify(data.bots.map((b) => b.bot));
  };
  await draw();
  live(draw);
}

// --- head to head --------------------------------------------------------------------------------------
async function pageH2h() {
  const draw = async () => {
    const data = await getFigure("/api/h2h", "head to head");
    const pairs = new Map(data.pairs.map((p) => [p.a + "\u0000" + p.b, p]));
    const cell = (a, b) => {
      if (a === b) return el("td", {class: "muted", text: "-"});
      const p = pairs.get(a + "\u0000" + b), q = pairs.get(b + "\u0000" + a);
      if (!p && !q) return el("td", {class: "muted", text: ""});
      const [better, even, worse, ahead, behind] = p ? [p.a_better, p.even, p.b_better, p.a_ahead, p.b_ahead]
                                                     : [q.b_better, q.even, q.a_better, q.b_ahead, q.a_ahead];
      return el("td", {title: `deal sets better-even-worse; matches ahead-behind: ${ahead}-${behind}`},
        el("a", {href: `/h2h/${encodeURIComponent(a)}/${encodeURIComponent(b)}`, text: `${better}-${even}-${worse}`}));
    };
    const matrix = el("table", {id: "h2h"},
      el("thead", {}, el("tr", {}, el("th", {class: "bot", text: "row vs column"}),
                                     data.bots.map((b) => el("th", {text: b})))),
      el("tbody", {}, data.bots.map((a) => el("tr", {}, el("td", {class: "bot"}, botLink(a)),
                                                data.bots.map((b) => cell(a, b))))));
    const list = el("table", {id: "pairs"},
      el("thead", {}, el("tr", {}, ["bot A", "bot B", "deal sets", "A better", "even", "B better", "matches",
                                      "A ahead", "B ahead"].map((t, i) => el("th", {class: i < 2 ? "bot" : null, text: t})))),
      el("tbody", {}, data.pairs.map((p) => el("tr", {},
        el("td", {class: "bot"}, botLink(p.a)), el("td", {class: "bot"}, botLink(p.b)),
        el("td", {}, el("a", {href: `/h2h/${encodeURIComponent(p.a)}/${encodeURIComponent(p.b)}`, text: p.deals})),
        [p.a_better, p.even, p.b_better, p.matches, p.a_ahead, p.b_ahead].map((v) => el("td", {text: v}))))));
    main.replaceChildren(el("h1", {text: "Head to head"}),
      el("p", {class: "muted"}, "On the complete deal sets both bots played (the same deals, every " +
        "rotation): how often the row bot's total over the set was better (" + (data.better || "lower") + "), even, " +
        "or worse. Hover for " +
        "matches where each finished ahead. ", asOf(data)), matrix, el("h2", {text: "Pairs"}), list);
  };
  await draw();
  live(draw);
}

// --- match lists ---------------------------------------------------------------------------------------
function matchTable(id, matches, highlight) {
  return el("table", {id},
    el("thead", {}, el("tr", {}, ["match", "finished", "deal", "rotation", "steps", "seats (total, place)"]
      .map((t, i) => el("th", {class: i === 5 ? "left" : null, text: t})))),
    el("tbody", {}, matches.map((m) => el("tr", {dataset: {id: m.id}, class: m.fresh ? "fresh" : null},
      el("td", {}, m.replay ? el("a", {href: "/match/" + m.id, text: m.id})
                            : el("span", {title: "replay shown once the deal set is complete", text: m.id + " *"})),
      el("td", {text: when(m.finished_at)}), el("td", {text: m.deal}), el("td", {text: m.rotation}),
      el("td", {text: m.steps}),
      el("td", {class: "left"}, m.seats.map((s, i) => [i ? ", " : "",
        el("span", {class: s.bot === highlight ? "me" : null},
          s.bot === highlight ? el("b", {text: s.bot}) : botLink(s.bot),
          ` ${s.total} (${s.place}${s.faults ? ", " + s.faults + " faults" : ""}${s.benched ? ", benched" : ""})`)]))))));
}

function pagedMatches(container, url, highlight, tableId) {
  // the first page follows new matches live; "older" appends the next page
  let pages = [];
  let next = null;
  let initial = null;  // the matches shown when the page opened: every later one stays marked fresh
  const draw = () => {
    const rows = pages.flat();
    container.replaceChildren(matchTable(tableId, rows, highlight),
      el("div", {class: "pager"}, next !== null ? el("button", {id: "older", text: "Older matches", onclick: older})
                                                : el("span", {class: "muted", text: rows.length ? "no older matches" : "no matches"})),
      el("p", {class: "muted", text: "* its deal set is not complete yet: the replay is shown once every rotation is played."}));
  };
  const first = async () => {
    const data = await getJSON(url);
    if (initial === null) initial = new Set(data.matches.map((m) => m.id));
    for (const m of data.matches) m.fresh = !initial.has(m.id);
    pages = [data.matches];
    next = data.next;
    draw();
  };
  const older = async () => {
    const sep = url.includes("?") ? "&" : "?";
    const data = await getJSON(url + sep + "before=" + next);
    pages.push(data.matches);
    next = data.next;
    draw();
  };
  return first;
}

async function pageMatches() {
  const box = el("div", {});
  main.replaceChildren(el("h1", {text: "Matches"}), box);
  const first = pagedMatches(box, "/api/matches", null, "matches");
  await first();
  live(first);
}

async function pagePair() {
  const a = body.dataset.a, b = body.dataset.b;
  const box = el("div", {});
  main.replaceChildren(el("h1", {}, botLink(a), " and ", botLink(b)),
    el("p", {class: "muted", text: "The matches both played, newest first; matches of one deal set share a deal number."}), box);
  const first = pagedMatches(box, `/api/h2h/${encodeURIComponent(a)}/${encodeURIComponent(b)}`, null, "pair-matches");
  await first();
  live(first);
}

// --- a bot's page --------------------------------------------------------------------------------------
function latencyPlot(histogram, deadline) {
  const width = 640, height = 200, left = 40, bottom = 30, top = 10;
  const s = svg("svg", {width, height, id: "latency"});
  if (!histogram.length) { return el("p", {class: "muted", text: "no decisions yet"}); }
  const lo = Math.max(1e-3, histogram[0].low_ms);
  const hi = Math.max(histogram[histogram.length - 1].high_ms, deadline || 0) * 1.2;
  const x = (v) => left + (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo)) * (width - left - 10);
  const most = Math.max(...histogram.map((h) => h.count));
  const y = (c) => height - bottom - c / most * (height - bottom - top);
  s.append(svg("line", {x1: left, x2: width - 10, y1: height - bottom, y2: height - bottom, stroke: "#999"}));
  for (const h of histogram) {
    s.append(svg("rect", {x: x(h.low_ms), y: y(h.count), width: Math.max(1, x(h.high_ms) - x(h.low_ms) - 0.5),
                          height: height - bottom - y(h.count), fill: "#2f5fd0"}));
  }
  for (let decade = Math.pow(10, Math.floor(Math.log10(lo))); decade <= hi; decade *= 10) {
    if (decade < lo) continue;
    s.append(svg("line", {x1: x(decade), x2: x(decade), y1: height - bottom, y2: height - bottom + 5, stroke: "#999"}));
    const t = svg("text", {x: x(decade), y: height - bottom + 18, "text-anchor": "middle", "font-size": 11});
    t.textContent = decade >= 1000 ? decade / 1000 + " s" : decade + " ms";
    s.append(t);
  }
  if (deadline) {
    s.append(svg("line", {x1: x(deadline), x2: x(deadline), y1: top, y2: height - bottom, stroke: "#b42318",
                          "stroke-dasharray": "4 3", "stroke-width": 2, id: "deadline"}));
    const t = svg("text", {x: x(deadline) - 4, y: top + 12, "text-anchor": "end", "font-size": 11, fill: "#b42318"});
    t.textContent = "deadline " + deadline + " ms";
    s.append(t);
  }
  return s;
}

async function pageBot() {
  const name = body.dataset.bot;
  const head = el("div", {}), tabs = el("div", {class: "tabs"}), list = el("div", {});
  main.replaceChildren(el("h1", {text: "Bot " + name}), head, el("h2", {text: "Matches"}), tabs, list);
  let filter = "all";
  let first = null;
  const drawTabs = () => tabs.replaceChildren(...["all", "won", "lost", "faulted"].map((f) =>
    el("button", {class: f === filter ? "on" : null, text: f, dataset: {filter: f},
                  onclick: async () => { filter = f; drawTabs(); await loadList(); }})));
  const loadList = async () => {
    first = pagedMatches(list, `/api/bot/${encodeURIComponent(name)}/matches?filter=${filter}`, name, "bot-matches");
    await first();
  };
  const drawHead = async () => {
    const data = await getJSON("/api/bot/" + encodeURIComponent(name));
    const r = data.board;
    const facts = r ? [["rank", r.rank + (r.ranks && r.ranks !== String(r.rank) ? ` (${r.ranks})` : "")],
                       ["estimate", r.estimate === null ? "-" : `${fmt(r.estimate, 2)} (${fmt(r.low, 2)} .. ${fmt(r.high, 2)})`],
                       ["TS mu", fmt(r.mu, 2)], ["TS sigma", fmt(r.sigma, 2)], ["matches", r.matches],
                       ["won", r.raw_wins], ["lost", r.matches - r.raw_wins], ["faulted matches", data.faulted],
                       ["faults", r.faults], ["latency p50", fmt(r.median_ms, 2) + " ms"],
                       ["p99", fmt(r.p99_ms, 2) + " ms"]] : [];
    head.replaceChildren(
      el("div", {class: "settings", id: "bot-facts"}, facts.map(([k, v]) => el("span", {}, k + ": ", el("b", {text: String(v)})))),
      el("h2", {text: "Decision latency"}), el("div", {class: "plot"}, latencyPlot(data.latency, data.deadline_ms)),
      el("p", {class: "muted", text: data.deadline_ms ? "Every decision's time, on a log scale, against the deadline."
        : "Every decision's time, on a log scale (this ladder did not store its deadline)."}),
      el("h2", {text: "Latest faults"}),
      data.faults.length ? el("table", {id: "faults"},
        el("thead", {}, el("tr", {}, ["match", "step", "kind", "reason"].map((t, i) => el("th", {class: i === 3 ? "left" : null, text: t})))),
        el("tbody", {}, data.faults.map((f) => el("tr", {},
          el("td", {}, el("a", {href: "/match/" + f.match, text: f.match})), el("td", {text: f.step}),
          el("td", {text: f.kind}),
          el("td", {class: "left", text: f.detail === null ? "(shown once the deal set is complete)" : f.detail})))))
        : el("p", {class: "muted", text: "no faults"}));
  };
  drawTabs();
  await Promise.all([drawHead(), loadList()]);
  live(async () => { await drawHead(); await first(); });
}

// --- the replay viewer -------------------------------------------------------------------------------
const gameScripts = {};
function loadGame(game) {
  if (!gameScripts[game]) {
    gameScripts[game] = new Promise((resolve, reject) => {
      const tag = el("script", {src: "/games/" + encodeURIComponent(game) + ".js"});
      tag.onload = () => resolve(window.ArenaGames[game]);
      tag.onerror = () => reject(new Error("cannot load the renderer of " + game));
      document.head.append(tag);
    });
  }
  return gameScripts[game];
}
window.ArenaGames = window.ArenaGames || {};

function viewer(fetchData, title) {
  // fetchData(seat) -> the viewer data of /api/match/ID?seat=
  // ?seat=N in the page's address opens the match as seat N met it (a contest links an author's seat so)
  const asked = new URLSearchParams(location.search).get("seat");
  let data = null, render = null, frame = 0, timer = null, seat = /^\d+$/.test(asked || "") ? asked : "all";
  const tableBox = el("div", {class: "tablebox", id: "table"});
  // the bots' debug text of the frame's decisions: on their owner's private replay (their seat), or the operator's
  const debugBox = el("div", {class: "debug", id: "debug"});
  const logBox = el("div", {class: "log", id: "log"});
  const status = el("span", {id: "status"});
  const slider = el("input", {type: "range", min: 0, max: 0, value: 0, id: "slider"});
  const roundSelect = el("select", {id: "round"});
  const seatSelect = el("select", {id: "seat"});
  const playButton = el("button", {id: "play", text: "play"});
  const info = el("div", {class: "settings", id: "match-info"});
  const button = (id, text, fn) => el("button", {id, text, onclick: fn});
  const controls = el("div", {class: "controls"},
    button("first", "|<", () => go(0)), button("back", "< step", () => go(frame - 1)), playButton,
    button("forward", "step >", () => go(frame + 1)), button("last", ">|", () => go(data.frames.length - 1)),
    slider, "round", roundSelect, "seen by", seatSelect, status);
  main.replaceChildren(el("h1", {text: title}), info, controls,
    el("div", {class: "viewer"}, el("div", {}, tableBox, debugBox),
       el("div", {}, el("h2", {text: "Events", style: "margin-top:0"}), logBox)));
  slider.addEventListener("input", () => go(Number(slider.value)));
  roundSelect.addEventListener("change", () => go(Number(roundSelect.value)));
  seatSelect.addEventListener("change", async () => { seat = seatSelect.value; await load(); });
  playButton.addEventListener("click", () => (timer ? pause() : play()));
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "INPUT" && e.target.type !== "range") return;
    if (e.key === "ArrowRight") go(frame + 1);
    else if (e.key === "ArrowLeft") go(frame - 1);
    else if (e.key === " ") { e.preventDefault(); timer ? pause() : play(); }
  });
  function play() {
    if (frame >= data.frames.length - 1) go(0);
    playButton.textContent = "pause";
    playButton.classList.add("on");
    timer = setInterval(() => { if (frame >= data.frames.length - 1) pause(); else go(frame + 1); }, 350);
  }
  function pause() {
    clearInterval(timer);
    timer = null;
    playButton.textContent = "play";
    playButton.classList.remove("on");
  }
  function go(index) {
    if (!data) return;
    frame = Math.max(0, Math.min(data.frames.length - 1, index));
    const f = data.frames[frame];
    slider.value = frame;
    status.textContent = `step ${frame} of ${data.frames.length - 1}` + (frame === data.frames.length - 1 ? " (end)" : "");
    body.dataset.frame = String(frame);
    render(tableBox, f, data);
    debugBox.replaceChildren(...Object.entries(f.debug || {}).map(([s, text]) =>
      el("pre", {class: "debug-text", "data-seat": s, text: `debug of ${data.names[s]}: ${text}`})));
    const previous = frame > 0 ? data.frames[frame - 1].events : 0;
    const lines = logBox.children;
    for (let i = 0; i < lines.length; i++) {
      lines[i].className = (i >= f.events ? "future" : i >= previous && frame > 0 ? "now" : "") +
        (data.events[i].kind === "round_started" ? " round" : "");
    }
    const now = logBox.querySelector(".now") || lines[Math.max(0, f.events - 1)];
    if (now) now.scrollIntoView({block: "nearest"});
    let roundIndex = 0;
    data.rounds.forEach(([r, i], k) => { if (i <= frame) roundIndex = k; });
    roundSelect.selectedIndex = roundIndex;
  }
  async function load() {
    pause();
    const keepEnd = data && frame === data.frames.length - 1;
    const eventsSeen = data ? data.frames[frame].events : 0;
    data = await fetchData(seat === "all" ? null : Number(seat));
    render = await loadGame(data.game);
    body.dataset.game = data.game;
    body.dataset.seat = seat;
    if (!seatSelect.options.length) {
      // a private replay (a contest author's own match) offers only the seats that are theirs
      const own = data.seats_allowed || null;
      if (!own) seatSelect.append(el("option", {value: "all", text: "from above (every hand)"}));
      seatSelect.append(...data.names.map((n, i) => el("option", {value: String(i), text: `seat ${i}: ${n}`}))
                                   .filter((o, i) => !own || own.includes(i)));
      if (own && seat === "all") seat = String(data.seat);
      seatSelect.value = seat;
      body.dataset.seat = seat;
    }
    roundSelect.replaceChildren(...data.rounds.map(([r, i]) => el("option", {value: String(i), text: "round " + r})));
    slider.max = data.frames.length - 1;
    logBox.replaceChildren(...data.events.map((e) => el("div", {text: e.text})));
    const m = data.match;
    const facts = [];
    if (m) facts.push(["deal", m.deal], ["rotation", m.rotation], ["finished", when(m.finished_at)],
                      ["seconds", m.seconds]);
    facts.push(["game", data.title], ["seats", data.names.length]);
    for (const [k, v] of Object.entries(data.options)) if (v !== null) facts.push([k, Array.isArray(v) ? v.join(",") : v]);
    const faults = data.faults.map((f) => `${data.names[f.seat]} at step ${f.step}: ${f.kind}` + (f.detail ? ` (${f.detail})` : ""));
    info.replaceChildren(...facts.map(([k, v]) => el("span", {}, k + ": ", el("b", {text: String(v)}))),
      el("span", {}, "players: ", ...data.names.map((n, i) => [i ? ", " : "", m ? botLink(n) : n])),
      ...(faults.length ? [el("span", {id: "match-faults"}, "faults: " + faults.join("; "))] : []));
    // keep the moment when the seat changes: the first frame that has seen as many events
    let index = 0;
    if (keepEnd) index = data.frames.length - 1;
    else { while (index < data.frames.length - 1 && data.frames[index].events < eventsSeen) index++; }
    go(index);
  }
  return load;
}

async function pageMatch() {
  const id = body.dataset.match;
  if (body.dataset.source === "private") {
    // a contest author's own match (a scrimmage): its JSON from the address the page names, their seats only
    const load = viewer((seat) => getJSON(body.dataset.api + (seat === null ? "" : "?seat=" + seat)),
                        body.dataset.heading || "Match");
    await load();
    return;
  }
  if (body.dataset.source === "file") {
    const load = viewer((seat) => getJSON("/api/replay/file" + (seat === null ? "" : "?seat=" + seat)),
                        "Replay " + (body.dataset.name || ""));
    await load();
    return;
  }
  const load = viewer((seat) => getJSON(`/api/match/${id}` + (seat === null ? "" : "?seat=" + seat)), "Match " + id);
  await load();
}

async function pageUpload() {
  const input = el("input", {type: "file", id: "file", accept: ".json,application/json"});
  const zone = el("div", {class: "dropzone"}, el("p", {text: "A replay file written by arena match --replay: "}), input);
  const box = el("div", {});
  main.replaceChildren(el("h1", {text: "Open a replay"}), zone, box);
  const open = async (file) => {
    const text = await file.text();
    const holder = el("div", {});
    main.replaceChildren(holder);
    const realMain = main;
    // the viewer draws into main; give it the page
    const load = viewer((seat) => getJSON("/api/replay" + (seat === null ? "" : "?seat=" + seat),
                                          {method: "POST", body: text, headers: {"Content-Type": "application/json"}}),
                        "Replay " + file.name);
    try { await load(); } catch (e) { realMain.append(el("p", {class: "error", id: "error", text: e.message})); }
  };
  input.addEventListener("change", () => input.files.length && open(input.files[0]));
  zone.addEventListener("dragover", (e) => e.preventDefault());
  zone.addEventListener("drop", (e) => { e.preventDefault(); if (e.dataTransfer.files.length) open(e.dataTransfer.files[0]); });
}

const PAGES = {board: pageBoard, ratings: pageRatings, h2h: pageH2h, pair: pagePair, matches: pageMatches,
               bot: pageBot, match: pageMatch, upload: pageUpload};
if (PAGES[body.dataset.page]) {
  PAGES[body.dataset.page]().then(() => { body.dataset.ready = "1"; }, showError);
}
