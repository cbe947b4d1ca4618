// The live page of a streamgen instance: polls /status and draws it. No
// library: the DOM is built with textContent only, so nothing in a status
// (names, error messages, dead-lettered records' messages) is ever read as
// markup. window.streamgen exposes refresh() and the last status for tests.
"use strict";
(function () {
  const body = document.body;
  const needToken = body.dataset.token === "true";
  const params = new URLSearchParams(location.search);
  const every = Math.max(100, Number(params.get("refresh")) || Number(body.dataset.refresh) || 1000);
  // seen counts the states each task was shown in, and restoresShown the
  // restores in progress the page drew (lastRestore: the latest's text),
  // so a test sees a state that lasted less than its own polling.
  const api = { last: null, prev: null, refresh: refresh, renders: 0, seen: {}, restoresShown: 0, lastRestore: "" };
  window.streamgen = api;
  let token = sessionStorage.getItem("streamgen-token") || "";
  let storesShown = "";

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  function td(v, cls) { return el("td", cls ? { class: cls } : {}, v); }
  function fill(id, rows) { document.querySelector("#" + id + " tbody").replaceChildren(...rows); }
  function headers() { return token ? { Authorization: "Bearer " + token } : {}; }
  function bytes(n) {
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0, v = n;
    while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(v)) + " " + u[i];
  }
  function rate(n) { return n >= 100 ? n.toFixed(0) : n.toFixed(1); }
  function clock(ms) { return new Date(ms).toLocaleTimeString(); }
  function showError(msg) {
    const e = document.getElementById("error");
    e.hidden = !msg;
    e.textContent = msg || "";
  }

  // perSecond is the change of a counter between the last two statuses.
  function perSecond(cur, prev, dt) { return prev === undefined || dt <= 0 ? 0 : Math.max(0, cur - prev) / dt; }

  async function refresh() {
    let res;
    try {
      res = await fetch("/status", { headers: headers(), cache: "no-store" });
    } catch (err) {
      showError("cannot reach the instance: " + err);
      return false;
    }
    if (res.status === 401) {
      document.getElementById("token-form").hidden = false;
      showError(token ? "the token was refused" : "this instance needs its bearer token");
      return false;
    }
    if (!res.ok) {
      showError("status: HTTP " + res.status);
      return false;
    }
    const st = await res.json();
    if (api.last && api.last.instance === st.instance) api.prev = api.last;
    else api.prev = null;
    api.last = st;
    showError("");
    render(st, api.prev);
    api.renders++;
    return true;
  }

  function render(st, prev) {
    const dt = prev ? (st.at - prev.at) / 1000 : 0;
    document.getElementById("app").textContent = st.application_id;
    document.getElementById("instance").textContent = "instance " + st.instance;
    const state = document.getElementById("state");
    state.textContent = st.state;
    state.className = "state s-" + st.state;
    const t = st.totals;
    document.getElementById("totals").textContent = t.tasks_running + " tasks running · " + t.processed + " records processed · " +
      t.commits + " commits · " + t.aborts + " aborts · " + t.rebalances + " rebalances";
    document.getElementById("updated").textContent = "updated " + clock(st.at);

    const prevNodes = {};
    if (prev) for (const n of prev.nodes) prevNodes[n.name] = n.forwarded;
    const rates = {};
    for (const n of st.nodes) rates[n.name] = perSecond(n.forwarded, prevNodes[n.name], dt);
    drawTopology(st.topology, rates);
    fill("nodes", st.nodes.map(n => el("tr", { "data-node": n.name },
      td(n.name), td(rate(rates[n.name]), "num rate"), td(n.forwarded, "num forwarded"))));

    const prevTasks = {};
    if (prev) for (const k of prev.tasks) prevTasks[k.id] = k.processed;
    fill("tasks", st.tasks.map(k => {
      const stateCell = el("td", { class: "task-state" }, el("span", { class: "state s-" + k.state }, k.state));
      if (k.state === "restoring") {
        for (const r of k.restores.filter(r => r.remaining > 0)) {
          const bar = el("span", { class: "bar" }, el("span"));
          bar.firstChild.style.width = Math.round(r.done * 100) + "%";
          const eta = r.eta_seconds >= 0 ? ", about " + Math.ceil(r.eta_seconds) + " s left" : "";
          const line = el("div", { class: "restore", "data-store": r.store }, bar,
            " " + r.store + " " + Math.floor(r.done * 100) + "% (" + r.restored + " restored, " + r.remaining + " left, " + rate(r.per_second) + "/s" + eta + ")");
          stateCell.append(line);
          api.restoresShown++;
          api.lastRestore = k.id + ": " + line.textContent;
        }
      }
      if (k.state === "standby") stateCell.append(el("div", { class: "standby-lag" }, "lag " + k.standby_lag));
      const parts = el("td", { class: "partitions" });
      for (const p of k.partitions || []) {
        parts.append(el("div", { "data-topic": p.topic, "data-partition": p.partition, "data-lag": p.lag },
          p.topic + "[" + p.partition + "]: " + (p.committed < 0 ? "none" : p.committed) + " / " + p.end + " (" + p.lag + ")"));
      }
      const seen = api.seen[k.id] = api.seen[k.id] || {};
      seen[k.state] = (seen[k.state] || 0) + 1;
      const d = k.dropped || { late: 0, skipped: 0, other: 0 };
      return el("tr", { "data-task": k.id, "data-state": k.state }, td(k.id), stateCell, parts,
        td(k.processed, "num processed"), td(rate(perSecond(k.processed, prevTasks[k.id], dt)), "num rate"),
        td(d.late + " / " + d.skipped + " / " + d.other, "num dropped"), td(k.dead_lettered, "num dead-lettered"));
    }));

    fill("stores", st.stores.map(s => el("tr", { "data-task": s.task, "data-store": s.store, "data-bytes": s.bytes },
      td(s.task), td(s.store), td(bytes(s.bytes), "num"))));

    const g = st.group;
    document.getElementById("group-state").textContent = g.error ? "group: " + g.error :
      "group " + st.application_id + " is " + g.state + " with " + g.members.length + " members";
    fill("instances", g.members.map(m => el("tr", { "data-instance": m.instance, "data-member": m.member_id,
      "data-active": m.active.join(" "), "data-standby": (m.standby || []).join(" "), class: m.self ? "self" : "" },
      td(m.instance), td(m.client_id), td(m.query_addr || "—"), td(m.active.join(" ")), td((m.standby || []).join(" ")))));

    fill("rebalances", st.rebalances.slice().reverse().map(r => el("tr", {},
      td(clock(r.at)), td(r.worker, "num"), td(r.generation, "num"), td((r.gained || []).join(" ")),
      td((r.lost || []).join(" ")), td(r.millis + " ms", "num"))));
    const dl = st.dead_letters;
    fill("deadletter-reasons", Object.keys(dl.by_reason).sort().map(k => el("tr", { "data-reason": k }, td(k), td(dl.by_reason[k], "num"))));
    fill("deadletters", dl.recent.slice().reverse().map(d => el("tr", {},
      td(clock(d.at)), td(d.reason), td(d.message), td(d.topic + "[" + d.partition + "]@" + d.offset))));

    const sel = document.getElementById("query-store");
    if (sel && (st.queryable || []).join() !== storesShown) {
      storesShown = (st.queryable || []).join();
      sel.replaceChildren(...(st.queryable || []).map(s => el("option", { value: s }, s)));
    }
  }

  // drawTopology lays every sub-topology out in columns by depth (a node
  // one column right of its deepest parent) and draws the edges.
  let topoKey = "";
  function drawTopology(topo, rates) {
    const key = JSON.stringify(topo);
    const box = document.getElementById("topology");
    if (key !== topoKey) {
      topoKey = key;
      box.replaceChildren(layout(topo));
    }
    for (const t of box.querySelectorAll("text.rate")) {
      const r = rates[t.dataset.node];
      t.textContent = r === undefined ? "" : rate(r) + " rec/s";
    }
  }

  function layout(topo) {
    const W = 190, H = 46, GX = 50, GY = 14, PAD = 16;
    const root = svg("svg", { class: "topology" });
    root.append(svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8a95a3" }))));
    let y0 = 0, width = 0;
    for (const sub of topo.subs) {
      const depth = {}, parents = {};
      for (const n of sub.nodes) for (const c of n.children || []) (parents[c] = parents[c] || []).push(n.name);
      const d = name => {
        if (depth[name] !== undefined) return depth[name];
        depth[name] = 0;
        depth[name] = Math.max(0, ...(parents[name] || []).map(p => d(p) + 1));
        return depth[name];
      };
      const cols = [];
      for (const n of sub.nodes) (cols[d(n.name)] = cols[d(n.name)] || []).push(n);
      const rows = Math.max(1, ...cols.map(c => (c || []).length));
      const h = PAD * 2 + 18 + rows * (H + GY);
      const w = PAD * 2 + cols.length * (W + GX) - GX;
      width = Math.max(width, w);
      const g = svg("g", { transform: "translate(0," + y0 + ")", "data-sub": sub.id });
      g.append(svg("rect", { class: "sub", x: 0, y: 0, width: w, height: h - GY, rx: 6 }));
      g.append(svg("text", { x: PAD, y: 16 }, "sub-topology " + sub.id + (sub.global ? " (global)" : "")));
      const pos = {};
      cols.forEach((col, i) => (col || []).forEach((n, j) => { pos[n.name] = { x: PAD + i * (W + GX), y: PAD + 18 + j * (H + GY) }; }));
      for (const n of sub.nodes) for (const c of n.children || []) {
        const a = pos[n.name], b = pos[c];
        if (!a || !b) continue;
        g.append(svg("path", { class: "edge", d: "M" + (a.x + W) + "," + (a.y + H / 2) + " C" + (a.x + W + GX / 2) + "," + (a.y + H / 2) + " " + (b.x - GX / 2) + "," + (b.y + H / 2) + " " + b.x + "," + (b.y + H / 2) }));
      }
      for (const n of sub.nodes) {
        const p = pos[n.name];
        const extra = (n.topics || []).join(", ") || (n.stores || []).join(", ");
        const title = svg("title", {}, n.kind + " " + n.name + (n.topics ? "\ntopics: " + n.topics.join(", ") : "") + (n.stores ? "\nstores: " + n.stores.join(", ") : ""));
        g.append(svg("g", { class: "node " + n.kind, "data-node": n.name, transform: "translate(" + p.x + "," + p.y + ")" }, title,
          svg("rect", { width: W, height: H, rx: 4 }),
          svg("text", { x: 6, y: 14 }, short(n.name, 28)),
          svg("text", { x: 6, y: 28, fill: "#5b6470" }, short(extra ? (n.topics ? "⇄ " : "▣ ") + extra : n.kind, 28)),
          svg("text", { x: 6, y: 41, class: "rate", "data-node": n.name }, "")));
      }
      root.append(g);
      y0 += h;
    }
    root.setAttribute("width", width);
    root.setAttribute("height", y0);
    return root;
  }
  function short(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  function setupQueries() {
    const form = document.getElementById("query-form");
    if (!form) return;
    const mode = document.getElementById("query-mode");
    const show = () => {
      for (const c of ["key", "range", "window"]) {
        for (const l of form.querySelectorAll(".q-" + c)) {
          l.hidden = !(c === mode.value || (c === "key" && mode.value === "window"));
        }
      }
    };
    mode.addEventListener("change", show);
    show();
    form.addEventListener("submit", async ev => {
      ev.preventDefault();
      const store = document.getElementById("query-store").value;
      const v = id => document.getElementById(id).value;
      let url = "/stores/" + encodeURIComponent(store);
      const q = new URLSearchParams();
      if (mode.value === "key") url += "/" + encodeURIComponent(v("query-key"));
      if (mode.value === "range") {
        if (v("query-from")) q.set("from", v("query-from"));
        if (v("query-to")) q.set("to", v("query-to"));
      }
      if (mode.value === "window") {
        if (v("query-key")) url += "/" + encodeURIComponent(v("query-key"));
        q.set("time_from", v("query-time-from") || "0");
        q.set("time_to", v("query-time-to") || String(Date.now()));
      }
      if ([...q].length) url += "?" + q;
      document.getElementById("query-url").textContent = "GET " + url;
      const out = document.getElementById("query-result");
      out.removeAttribute("data-status");
      out.textContent = "…";
      try {
        const res = await fetch(url, { headers: headers(), cache: "no-store" });
        const text = await res.text();
        let shown = text;
        try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON: shown as it is */ }
        out.textContent = shown;
        out.setAttribute("data-status", res.status);
      } catch (err) {
        out.textContent = "request failed: " + err;
        out.setAttribute("data-status", "error");
      }
    });
  }

  document.getElementById("token-form").addEventListener("submit", ev => {
    ev.preventDefault();
    token = document.getElementById("token").value.trim();
    sessionStorage.setItem("streamgen-token", token);
    document.getElementById("token-form").hidden = true;
    refresh();
  });
  if (needToken && !token) document.getElementById("token-form").hidden = false;
  setupQueries();
  async function loop() {
    await refresh();
    setTimeout(loop, every);
  }
  loop();
})();
