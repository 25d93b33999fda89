// lmtrain dashboard: a small single-page app over lm-server's JSON API (/api/v1).
// Pages: #/jobs (table, filters), #/jobs/ID (charts, events, checkpoints, logs, cancel),
// #/workers. Every page polls the API every POLL_MS. All text from the server goes into the
// DOM as text (never as HTML).
"use strict";

(function () {
  const POLL_MS = 2000;
  const STATES = ["QUEUED", "SCHEDULED", "RUNNING", "PREEMPTED", "RETRYING", "SUCCEEDED",
                  "FAILED", "CANCELLED"];
  const TERMINAL = new Set(["SUCCEEDED", "FAILED", "CANCELLED"]);
  const COLORS = ["#2f6fed", "#e8590c", "#2e9e5b", "#9c36b5", "#d6336c", "#0c8599", "#f08c00"];
  const view = document.getElementById("view");
  const conn = document.getElementById("conn");
  const filters = { state: "", user: "" };  // Kept across page changes.
  let page = null;

  // ---- helpers ------------------------------------------------------------------------------

  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(e.dataset, v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  class ApiError extends Error {
    constructor(status, message) { super(message); this.status = status; }
  }

  function authHeaders(extra) {
    const headers = Object.assign({}, extra);
    const token = localStorage.getItem("lmtrain.token");
    if (token) headers["Authorization"] = "Bearer " + token;
    return headers;
  }

  // A standby replica redirects writes (and the workers list) to the active one. The dashboard
  // does not follow: the active replica is another origin (the page's CSP allows only its
  // own, and the token is stored per origin), so it shows where the active replica is instead.
  async function api(path, options = {}) {
    const headers = authHeaders(options.headers);
    let res;
    try {
      res = await fetch(path, Object.assign({}, options, { headers, redirect: "manual" }));
    } catch (e) {
      setConn(false, "lm-server unreachable");
      throw new ApiError(0, "lm-server unreachable");
    }
    if (res.type === "opaqueredirect") {
      const active = await activeReplica();
      setConn(true, "connected");
      throw new ApiError(307, "this lm-server is a standby replica; do this on the active one" +
        (active ? " at " + active : " (none is active right now; try again shortly)"));
    }
    showStandby(res.headers.get("X-Lmtrain-Active-Replica"));
    let body = null;
    try { body = await res.json(); } catch (e) { /* not JSON */ }
    if (res.status === 401) showTokenForm();
    if (!res.ok) {
      setConn(res.status < 500, res.status < 500 ? "connected" : "server error");
      throw new ApiError(res.status, (body && body.error) || `HTTP ${res.status}`);
    }
    setConn(true, "connected");
    return body;
  }

  // The active replica's URL as this standby knows it ("" when none), or null when this
  // lm-server is the active one.
  async function activeReplica() {
    try {
      const res = await fetch("/api/v1/replica", { headers: authHeaders() });
      const body = await res.json();
      showStandby(body.role === "standby" ? (body.active || "unknown") : null);
      return body.role === "standby" ? body.active : null;
    } catch (e) {
      return "";
    }
  }

  function showStandby(active) {
    const bar = document.getElementById("standby");
    if (!active) {
      bar.classList.add("hidden");
      return;
    }
    bar.replaceChildren(!/^https?:\/\//.test(active)
      ? "This lm-server is a standby replica: jobs are shown read-only, and no replica is active " +
        "right now."
      : h("span", {}, "This lm-server is a standby replica: jobs are shown read-only. Cancel and " +
        "workers are on the active one: ", h("a", { href: active + "/" + location.hash }, active)));
    bar.classList.remove("hidden");
  }

  function setConn(ok, text) {
    conn.className = "conn " + (ok ? "ok" : "err");
    conn.textContent = text;
  }

  function showTokenForm() {
    document.getElementById("token-form").classList.remove("hidden");
  }

  document.getElementById("token-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = document.getElementById("token-input").value.trim();
    if (v) localStorage.setItem("lmtrain.token", v); else localStorage.removeItem("lmtrain.token");
    document.getElementById("token-form").classList.add("hidden");
    route();
  });

  const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const fmt = (v, digits = 4) => (num(v) === null ? "—" : +v.toPrecision(digits) + "");
  const fmtInt = (v) => (num(v) === null ? "—" : Math.round(v).toLocaleString("en-US"));

  function duration(sec) {
    if (!Number.isFinite(sec) || sec < 0) return "—";
    sec = Math.round(sec);
    if (sec < 60) return sec + "s";
    if (sec < 3600) return Math.floor(sec / 60) + "m " + (sec % 60) + "s";
    return Math.floor(sec / 3600) + "h " + Math.floor((sec % 3600) / 60) + "m";
  }
  const ago = (ms) => (ms ? duration((Date.now() - ms) / 1000) + " ago" : "—");
  const time = (ms) => (ms ? new Date(ms).toLocaleString() : "—");
  // A job's times are RFC 3339 strings or null (docs/api.md); Unix ms here, null when unset.
  const msOf = (rfc3339) => (rfc3339 ? Date.parse(rfc3339) : null);

  function badge(state, title) {
    return h("span", { class: "badge " + state, title, dataset: { state } }, state);
  }

  function progress(job) {
    const m = job.metrics || {};
    const step = num(m.step), max = num(m.max_steps);
    if (step === null || !max) return h("span", { class: "muted" }, "—");
    const pct = Math.max(0, Math.min(100, (100 * step) / max));
    const fill = h("div");
    fill.style.width = pct.toFixed(1) + "%";
    return h("div", { class: "progress", title: `${pct.toFixed(1)}%` },
      h("div", { class: "bar" + (job.state === "SUCCEEDED" ? " done" : "") }, fill),
      h("span", { class: "label" }, `${fmtInt(step)} / ${fmtInt(max)}`));
  }

  // Seconds left: from recent metric points (step, time) when given, else from the average
  // rate since the job started.
  function eta(job, points) {
    if (TERMINAL.has(job.state) || job.state !== "RUNNING") return null;
    const m = job.metrics || {};
    const step = num(m.step), max = num(m.max_steps);
    if (step === null || !max || step >= max) return null;
    const timed = (points || []).filter((p) => num(p.step) !== null && p.time_ms);
    if (timed.length >= 2) {
      const a = timed[Math.max(0, timed.length - 20)], b = timed[timed.length - 1];
      const rate = (b.step - a.step) / ((b.time_ms - a.time_ms) / 1000);
      if (rate > 0) return (max - step) / rate;
    }
    const started = msOf(job.started_at);
    if (started && step > 0) {
      const rate = step / ((Date.now() - started) / 1000);
      if (rate > 0) return (max - step) / rate;
    }
    return null;
  }

  function notice(text, kind) {
    return h("div", { class: "notice" + (kind ? " " + kind : "") }, text);
  }

  // A page polls `fn` until stopped. refresh() runs it now, after any run in progress (runs
  // never overlap, so incremental fetches never interleave); errors go to onError.
  class Poller {
    constructor(fn) {
      this.fn = fn;
      this.stopped = false;
      this.chain = Promise.resolve();
      setTimeout(() => this.run(), 0);
    }
    refresh() {
      this.chain = this.chain.then(async () => {
        if (this.stopped) return;
        try { await this.fn(); } catch (e) { if (this.onError) this.onError(e); }
      });
      return this.chain;
    }
    async run() {
      while (!this.stopped) {
        await this.refresh();
        await new Promise((r) => (this.timer = setTimeout(r, POLL_MS)));
      }
    }
    stop() { this.stopped = true; clearTimeout(this.timer); }
  }

  // ---- jobs ---------------------------------------------------------------------------------

  function jobsPage() {
    const stateSel = h("select", { id: "filter-state" },
      h("option", { value: "" }, "All states"),
      h("option", { value: "QUEUED,SCHEDULED,RUNNING,PREEMPTED,RETRYING" }, "Active"),
      STATES.map((s) => h("option", { value: s }, s)));
    stateSel.value = filters.state;
    const userIn = h("input", { id: "filter-user", type: "text", placeholder: "any user",
                                value: filters.user });
    const count = h("span", { class: "sub" });
    const msg = h("div");
    const tbody = h("tbody");
    const table = h("table", { id: "jobs-table" },
      h("thead", {}, h("tr", {}, ["ID", "Name", "User", "Priority", "State", "Progress", "Loss",
        "Tokens/s", "ETA", "Submitted"].map((c, i) =>
        h("th", { class: [3, 6, 7].includes(i) ? "num" : "" }, c)))),
      tbody);
    // Each poll reloads the first page and the `pages - 1` pages "More" asked for after it,
    // following next_page_token, so rows already shown stay live.
    let pages = 1;
    const more = h("a", { id: "jobs-more", href: "#/jobs", class: "hidden",
                          onclick: (e) => { e.preventDefault(); pages += 1; poller.refresh(); } },
      "More");
    view.replaceChildren(
      h("div", { class: "page-head" }, h("h1", {}, "Jobs"), count),
      h("div", { class: "filters" }, h("label", { for: "filter-state" }, "State"), stateSel,
        h("label", { for: "filter-user" }, "User"), userIn),
      msg, h("div", { class: "panel flush" }, table), h("div", { class: "filters" }, more));

    const poller = new Poller(async () => {
      const jobs = [];
      let token = "";
      for (let i = 0; i < pages && (i === 0 || token); ++i) {
        const q = new URLSearchParams({ page_size: "200", view: "basic" });
        if (filters.state) q.set("state", filters.state);
        if (filters.user) q.set("user", filters.user);
        if (token) q.set("page_token", token);
        const data = await api("/api/v1/jobs?" + q);
        jobs.push(...data.jobs);
        token = data.next_page_token || "";
      }
      msg.replaceChildren();
      count.textContent = `${jobs.length} shown`;
      more.classList.toggle("hidden", !token);
      tbody.replaceChildren(...(jobs.length ? jobs.map(jobRow)
        : [h("tr", {}, h("td", { class: "empty", colspan: 10 }, "No jobs match."))]));
    });
    poller.onError = (e) => msg.replaceChildren(notice(e.message, "error"));
    const refilter = () => {
      pages = 1;
      filters.state = stateSel.value;
      filters.user = userIn.value.trim();
      poller.refresh();
    };
    stateSel.addEventListener("change", refilter);
    userIn.addEventListener("change", refilter);
    return poller;
  }

  function jobRow(job) {
    const m = job.metrics || {};
    const left = eta(job);
    return h("tr", { class: "clickable", dataset: { jobId: job.id, state: job.state },
                     onclick: () => (location.hash = "#/jobs/" + job.id) },
      h("td", { class: "mono" }, h("a", { href: "#/jobs/" + job.id }, job.id)),
      h("td", {}, job.name || "—", " ", h("span", { class: "muted" }, job.task)),
      h("td", {}, job.user || h("span", { class: "muted" }, "anonymous")),
      h("td", { class: "num" }, String(job.priority)),
      h("td", {}, badge(job.state, job.waiting_reason || job.error || "")),
      h("td", {}, progress(job)),
      h("td", { class: "num" }, fmt(m.loss)),
      h("td", { class: "num" }, fmtInt(m.tokens_per_second)),
      h("td", {}, left === null ? "—" : duration(left)),
      h("td", { class: "muted", title: time(msOf(job.created_at)) }, ago(msOf(job.created_at))));
  }

  // ---- one job ------------------------------------------------------------------------------

  function jobPage(id) {
    const st = { job: null, points: [], metricsAfter: 0, events: [], eventsAfter: 0,
                 logs: [], logsAfter: 0 };
    const title = h("h1", {}, "Job " + id);
    const stateSlot = h("span");
    const cancelBtn = h("button", { id: "cancel-btn", class: "danger", disabled: true }, "Cancel job");
    const confirmBar = h("div", { class: "confirm hidden", id: "cancel-confirm-bar" },
      `Cancel job ${id}? Its trainer is stopped.`,
      h("button", { id: "cancel-confirm", class: "danger" }, "Yes, cancel"),
      h("button", { id: "cancel-abort" }, "Keep running"));
    const msg = h("div");
    const cards = h("div", { class: "cards" });
    const charts = {
      loss: h("div", { class: "chart", id: "chart-loss" }),
      eval: h("div", { class: "chart", id: "chart-eval" }),
      lr: h("div", { class: "chart", id: "chart-lr" }),
    };
    const details = h("dl", { class: "kv" });
    const ckptBody = h("tbody");
    const eventsBody = h("tbody");
    const logs = h("pre", { class: "logs", id: "job-logs" });
    view.replaceChildren(
      h("div", { class: "page-head" }, h("a", { href: "#/jobs" }, "Jobs"), h("span", { class: "muted" }, "/"),
        title, stateSlot, h("div", { class: "spacer" }), confirmBar, cancelBtn),
      msg, cards,
      h("div", { class: "charts" },
        h("div", { class: "panel" }, h("h2", {}, "Loss"), charts.loss),
        h("div", { class: "panel" }, h("h2", {}, "Evaluation metrics"), charts.eval),
        h("div", { class: "panel" }, h("h2", {}, "Learning rate"), charts.lr)),
      h("div", { class: "two" },
        h("div", { class: "panel" }, h("h2", {}, "Details"), details),
        h("div", { class: "panel" }, h("h2", {}, "Checkpoints"), h("div", { class: "scroll" },
          h("table", { id: "checkpoints-table" }, h("thead", {}, h("tr", {}, h("th", { class: "num" }, "Step"),
            h("th", {}, "Path"), h("th", {}, "Saved"))), ckptBody)))),
      h("div", { class: "panel" }, h("h2", {}, "Events"), h("div", { class: "scroll" },
        h("table", { id: "events-table" }, h("thead", {}, h("tr", {}, h("th", { class: "num" }, "Seq"),
          h("th", {}, "Time"), h("th", {}, "Type"), h("th", {}, "Detail"))), eventsBody))),
      h("div", { class: "panel" }, h("h2", {}, "Logs"), logs));

    cancelBtn.addEventListener("click", () => confirmBar.classList.remove("hidden"));
    confirmBar.querySelector("#cancel-abort").addEventListener("click", () => confirmBar.classList.add("hidden"));
    confirmBar.querySelector("#cancel-confirm").addEventListener("click", async () => {
      confirmBar.classList.add("hidden");
      cancelBtn.disabled = true;
      try {
        const r = await api(`/api/v1/jobs/${id}/cancel`, { method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ reason: "cancelled from the dashboard" }) });
        st.flash = { text: `Cancel requested; job is ${r.state} until its trainer has stopped.` };
        await poller.refresh();
      } catch (e) {
        st.flash = { text: "Cancel failed: " + e.message, kind: "error" };
        msg.replaceChildren(notice(st.flash.text, "error"));
      }
    });

    async function fetchAll(kind, afterKey, into, listKey) {
      for (let guard = 0; guard < 50; guard++) {
        const r = await api(`/api/v1/jobs/${id}/${kind}?after=${st[afterKey]}`);
        into.push(...r[listKey]);
        st[afterKey] = r.next_after;
        if (!r.more && !(listKey === "events" && r.events.length === 500)) break;
      }
    }

    const poller = new Poller(async () => {
      st.job = await api("/api/v1/jobs/" + id);
      await fetchAll("metrics", "metricsAfter", st.points, "points");
      await fetchAll("events", "eventsAfter", st.events, "events");
      await fetchAll("logs", "logsAfter", st.logs, "lines");
      renderJob(st);
    });
    poller.onError = (e) => msg.replaceChildren(notice(e.message, "error"));

    function renderJob(st) {
      const job = st.job, m = job.metrics || {};
      title.textContent = job.name || "Job " + id;
      stateSlot.replaceChildren(badge(job.state));
      view.dataset.jobState = job.state;
      cancelBtn.disabled = TERMINAL.has(job.state);
      const notes = [];
      if (job.error) notes.push(notice(job.error, "error"));
      if (job.waiting_reason) notes.push(notice("Waiting: " + job.waiting_reason));
      if (st.flash && (st.flash.kind || !TERMINAL.has(job.state))) notes.push(notice(st.flash.text, st.flash.kind));
      msg.replaceChildren(...notes);
      const left = eta(job, st.points);
      const end = msOf(job.finished_at) || Date.now(), started = msOf(job.started_at);
      cards.replaceChildren(
          ...[['Step', num(m.step) === null ? '—' : `${fmtInt(m.step)} / ${fmtInt(m.max_steps)}`],
              ['Loss', fmt(m.loss)],
              ['Eval loss', fmt(m.eval_loss)],
              [
                'Learning rate',
                num(m.learning_rate) === null ? '—' : m.learning_rate.toExponential(2)
              ],
              ['Tokens/s', fmtInt(m.tokens_per_second)],
              ...(num(m.num_input_tokens_seen) === null ?
                      [] :
                      [['Tokens seen', fmtInt(m.num_input_tokens_seen)]]),
              ['ETA', left === null ? '—' : duration(left)],
              ['Elapsed', started ? duration((end - started) / 1000) : '—'],
      ].map(([k, v]) =>
                h('div', {class: 'card'}, h('div', {class: 'k'}, k), h('div', {class: 'v'}, v))));
      renderCharts(st.points);
      renderDetails(job);
      ckptBody.replaceChildren(...(job.checkpoints.length ? job.checkpoints.slice().reverse().map((c) =>
        h("tr", {}, h("td", { class: "num" }, fmtInt(c.step)), h("td", { class: "mono" }, c.path),
          h("td", { class: "muted" }, time(msOf(c.created_at)))))
        : [h("tr", {}, h("td", { class: "empty", colspan: 3 }, "No checkpoints yet."))]));
      eventsBody.replaceChildren(...st.events.slice(-300).reverse().map(eventRow));
      const atBottom = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
      logs.replaceChildren(...(st.logs.length ? st.logs.slice(-2000).map((l) =>
        h("span", { class: l.stream }, l.text.endsWith("\n") ? l.text : l.text + "\n"))
        : [h("span", { class: "server" }, "No log lines yet.")]));
      if (atBottom) logs.scrollTop = logs.scrollHeight;
    }

    function renderCharts(points) {
      const series = (key, name, color, pts = points) => ({ name, color,
        points: pts.filter((p) => num(p.step) !== null && num(p[key]) !== null).map((p) => ({ x: p.step, y: p[key] })) });
      LmCharts.lineChart(charts.loss, { title: "loss", xLabel: "step",
        series: [series("loss", "train loss", COLORS[0]), series("eval_loss", "eval loss", COLORS[1])] });
      const evalKeys = new Set();
      for (const p of points) for (const k of Object.keys(p.eval_metrics || {})) evalKeys.add(k);
      const flat = points.map((p) => Object.assign({}, p, p.eval_metrics || {}));
      const evalSeries = [series("perplexity", "perplexity", COLORS[2], flat)];
      [...evalKeys].sort().forEach((k, i) => evalSeries.push(series(k, k, COLORS[(i + 3) % COLORS.length], flat)));
      LmCharts.lineChart(charts.eval, { title: "evaluation", xLabel: "step", series: evalSeries,
        empty: "No evaluation yet" });
      LmCharts.lineChart(charts.lr, { title: "learning rate", xLabel: "step",
        series: [series("learning_rate", "learning rate", COLORS[3])] });
    }

    function renderDetails(job) {
      const rows = [["ID", job.id], ["Task", job.task], ["User", job.user || "anonymous"],
        ["Priority", String(job.priority)], ["Submitted", time(msOf(job.created_at))],
        ["Started", time(msOf(job.started_at))], ["Finished", time(msOf(job.finished_at))],
        ["Worker", job.worker_id || "—"],
        ["Resources", `${job.resources.workers} worker(s) × ${job.resources.slots_per_worker} slot(s)` +
          (job.resources.gpus_per_worker ? `, ${job.resources.gpus_per_worker} GPU(s) per worker` : "")],
        ["Attempts", job.attempts.map((a) => `#${a.number} ${a.outcome || "running"}`).join(", ") || "—"],
        ["GPUs", gpuText(job)],
        ["Retries", `${job.retries} of ${job.resources.max_retries}`], ["Output", job.output_dir || "—"]];
      details.replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
    }

    // The latest attempt's GPUs: "rank 0: w1-… GPU 2; rank 1: …", or "—" for a CPU job.
    function gpuText(job) {
      const a = job.attempts[job.attempts.length - 1];
      if (!a || !a.rank_gpus || !a.rank_gpus.length) return "—";
      const per = job.resources.slots_per_worker || 1;
      return a.rank_gpus.map((g, r) => `rank ${r}: ${a.worker_ids[Math.floor(r / per)] || "?"} GPU ${g.join(",")}`)
        .join("; ");
    }

    function eventRow(e) {
      let detail;
      if (e.type === "state") detail = [badge(e.state), " ", e.reason];
      else if (e.type === "metrics") detail = Object.entries(e.metrics).filter(([k]) => k !== "eval_metrics")
        .map(([k, v]) => `${k}=${typeof v === "number" ? +v.toPrecision(5) : v}`).join("  ");
      else if (e.type === "checkpoint") detail = `step ${e.step}: ${e.path}`;
      else detail = `[${e.stream}] ${e.text}`;
      return h("tr", {}, h("td", { class: "num" }, String(e.seq)), h("td", { class: "muted" }, time(e.time_ms)),
        h("td", {}, e.type), h("td", { class: e.type === "metrics" || e.type === "log" ? "mono" : "" }, detail));
    }
    return poller;
  }

  // ---- workers ------------------------------------------------------------------------------

  function workersPage() {
    const msg = h("div");
    const cards = h("div", { class: "cards" });
    const tbody = h("tbody");
    view.replaceChildren(h("div", { class: "page-head" }, h("h1", {}, "Workers")), msg, cards,
      h("div", { class: "panel flush" }, h("table", { id: "workers-table" },
        h("thead", {}, h("tr", {}, ["Name", "ID", "Host", "Slots", "Used", "Utilisation", "Labels",
          "Devices", "Last seen", "Running jobs"].map((c, i) => h("th", { class: [3, 4].includes(i) ? "num" : "" }, c)))),
        tbody)));
    const poller = new Poller(async () => {
      const { workers } = await api("/api/v1/workers");
      msg.replaceChildren();
      const slots = workers.reduce((n, w) => n + w.slots, 0);
      const used = workers.reduce((n, w) => n + w.used_slots, 0);
      const gpus = workers.reduce((n, w) => n + w.devices.filter((d) => d.type === "cuda").length, 0);
      const usedGpus = workers.reduce((n, w) => n + (w.used_gpus || 0), 0);
      cards.replaceChildren(...[["Workers", String(workers.length)], ["Slots", String(slots)],
        ["In use", String(used)], ["Utilisation", slots ? Math.round((100 * used) / slots) + "%" : "—"],
        ["GPUs in use", gpus ? `${usedGpus} of ${gpus}` : "—"]]
        .map(([k, v]) => h("div", { class: "card" }, h("div", { class: "k" }, k), h("div", { class: "v" }, v))));
      tbody.replaceChildren(...(workers.length ? workers.map(workerRow)
        : [h("tr", {}, h("td", { class: "empty", colspan: 10 }, "No workers registered."))]));
    });
    poller.onError = (e) => msg.replaceChildren(notice(e.status === 403 ? "Only admins can see workers." : e.message, "error"));
    return poller;
  }

  function workerRow(w) {
    const pct = w.slots ? (100 * w.used_slots) / w.slots : 0;
    const fill = h("div");
    fill.style.width = pct.toFixed(0) + "%";
    return h("tr", { dataset: { workerId: w.id } },
      h("td", {}, w.name || "—"), h("td", { class: "mono" }, w.id), h("td", {}, w.hostname || "—"),
      h("td", { class: "num" }, String(w.slots)), h("td", { class: "num" }, String(w.used_slots)),
      h("td", {}, h("div", { class: "progress" }, h("div", { class: "bar" }, fill), h("span", { class: "label" }, pct.toFixed(0) + "%"))),
      h("td", {}, Object.entries(w.labels).map(([k, v]) => h("span", { class: "tag" }, `${k}=${v}`))),
      h("td", {}, w.devices.map((d) => h("span", { class: "tag" }, `${d.type}:${d.index}${d.name ? " " + d.name : ""}`))),
      h("td", { class: "muted" }, ago(w.last_seen_ms)),
      h("td", {}, w.running_job_ids.map((j) => h("a", { class: "tag", href: "#/jobs/" + j }, j))));
  }

  // ---- router -------------------------------------------------------------------------------

  function route() {
    if (page) page.stop();
    const hash = location.hash || "#/jobs";
    const job = hash.match(/^#\/jobs\/(\d+)$/);
    document.getElementById("nav-jobs").classList.toggle("active", hash.startsWith("#/jobs"));
    document.getElementById("nav-workers").classList.toggle("active", hash === "#/workers");
    delete view.dataset.jobState;
    if (job) page = jobPage(job[1]);
    else if (hash === "#/workers") page = workersPage();
    else page = jobsPage();
  }

  window.addEventListener("hashchange", route);
  route();
})();
