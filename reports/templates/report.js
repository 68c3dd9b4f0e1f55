"use strict";
/* report.html's script: filters (kept in the URL hash, so a view can be linked), the family matrix, and the
   result lists and detail panels, built on demand from the deflated data blocks (reports/payload.py). */
(function () {
  const $ = (s, el) => (el || document).querySelector(s);
  const $$ = (s, el) => Array.from((el || document).querySelectorAll(s));
  const PAGE = 200;  // results listed per group before a "show more" button
  const KEYS = ["f", "b", "d", "s", "o", "g", "q", "u"];
  const ctl = {}; for (const k of KEYS) ctl[k] = $("#f-" + k);
  let S, G, R, rowText, rowGroup, C, classes;  // strings, groups, results, search text, group of each result, chunk starts
  const chunkData = new Map();
  const chunkText = ($("#cd-details").textContent || "").split("\n");
  let matched = null;

  async function inflate(b64) {
    const bin = atob(b64.trim()), bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return JSON.parse(await new Response(stream).text());
  }

  // ---- filter state <-> controls <-> URL hash -------------------------------------------------------
  function state() {
    const st = {};
    for (const k of KEYS) st[k] = k === "u" ? (ctl.u.checked ? "1" : "") : ctl[k].value.trim();
    return st;
  }
  function setState(st) {
    for (const k of KEYS) {
      if (k === "u") { ctl.u.checked = st.u === "1"; continue; }
      const v = st[k] || "", el = ctl[k];
      if (el.tagName === "SELECT" && v && !Array.from(el.options).some(o => o.value === v)) el.add(new Option(v, v));
      el.value = v;
    }
  }
  function hashOf(st, extra) {
    const h = new URLSearchParams();
    for (const k of KEYS) if (st[k]) h.set(k, st[k]);
    for (const [k, v] of Object.entries(extra || {})) h.set(k, v);
    return h.toString();
  }
  function writeHash(st) {
    const h = hashOf(st);
    $("#permalink").href = "#" + h;
    if (location.hash.slice(1) !== h) history.replaceState(null, "", h ? "#" + h : location.pathname + location.search);
  }

  // ---- matching -----------------------------------------------------------------------------------
  function statusOk(want, status) {
    if (!want) return status !== "pass";
    if (want === "crashes") return classes.crash.includes(status);
    if (want === "refusals") return classes.refusal.includes(status);
    if (want === "wrong") return classes.wrong.includes(status);
    return want === status;
  }
  function apply(fromUser) {
    const st = state(), q = st.q.toLowerCase();
    $$("table.matrix").forEach(t => { t.hidden = t.dataset.fam !== st.f; });
    $$(".fambar button").forEach(b => b.classList.toggle("on", b.dataset.fam === st.f));
    $("#passnote").hidden = st.s !== "pass";
    if (fromUser !== false) writeHash(st);
    else $("#permalink").href = "#" + hashOf(st);
    if (!R) return;
    const gok = G.map(g => (!st.f || S[g[2]] === st.f) && (!st.b || S[g[7]] === st.b) && (!st.d || S[g[8]] === st.d) &&
      statusOk(st.s, S[g[1]]));
    matched = new Uint8Array(R.length);
    const counts = new Array(G.length).fill(0);
    let shown = 0;
    for (let k = 0; k < R.length; k++) {
      const gi = rowGroup[k], r = R[k];
      if (!gok[gi]) continue;
      if (st.o && S[r[5]] !== st.o) continue;
      if (st.u && !(r[4] & 1)) continue;
      if (st.g && !("|" + S[r[6]] + "|").includes("|" + st.g + "|")) continue;
      if (q && !rowText[k].includes(q)) continue;
      matched[k] = 1; counts[gi]++; shown++;
    }
    let groups = 0;
    G.forEach((g, i) => {
      groups += counts[i] > 0;
      const el = $("#g" + i);  // an unsupported group has no element until its section is opened
      if (!el) return;
      el.hidden = counts[i] === 0;
      el.querySelector(".n").textContent = counts[i] === g[4] ? g[4] : counts[i] + "/" + g[4];
      if (el.open) list(el, i);
    });
    $$("h3.cls").forEach(h => {  // a class heading disappears with its last group
      let el = h.nextElementSibling, any = false;
      while (el && el.classList.contains("grp")) { any = any || !el.hidden; el = el.nextElementSibling; }
      h.hidden = !any;
    });
    const uns = $("#unsupported");
    if (uns && st.s === "unsupported" && !uns.open) uns.open = true;
    $("#shown").textContent = shown.toLocaleString("en-US");
    $("#shown-g").textContent = groups.toLocaleString("en-US");
    listUnexpected(st);
    for (const c of $$("table.matrix td.sel")) c.classList.remove("sel");
  }

  // ---- the first screen's unexpected results, as the filters narrow them ------------------------------------
  function unexpectedItem(k) {  // the markup report.html.j2 writes for one (#unexpected li)
    const r = R[k], g = G[rowGroup[k]], li = document.createElement("li"), a = document.createElement("a");
    li.title = S[r[7]];  // the message's first line: an item is cut to one line
    a.href = "#r=" + k; a.className = "mono";
    a.textContent = S[r[0]] + "::" + S[r[1]] + (S[r[2]] !== "out" ? " [" + S[r[2]] + "]" : "");
    const st = document.createElement("span");
    st.className = "st st-" + S[g[1]];
    st.textContent = S[g[1]] + (r[4] & 8 ? " (adapter)" : r[4] & 16 ? " (convdiff)" : "");
    li.append(a, " " + S[g[0]] + " ", st);
    if (r[4] & 4) li.append(" non-finite output");
    else if (r[3] !== null) li.append(" " + fmt(r[3]) + " x bound");
    if (S[g[12]]) { const c = document.createElement("code"); c.textContent = S[g[12]]; li.append(" · diagnosis ", c); }
    else if (r[3] === null && !(r[4] & 4)) {
      const m = document.createElement("span"); m.className = "muted"; m.textContent = S[r[7]]; li.append(" ", m);
    }
    return li;
  }
  function listUnexpected(st) {
    const ol = $("#unexpected ol.unexp");
    if (!ol || !R) return;
    const limit = +ol.dataset.limit, keys = [];
    let n = 0, all = 0;
    for (let k = 0; k < R.length; k++) {
      if (!(R[k][4] & 1)) continue;
      all++;
      if (!matched[k]) continue;
      n++;
      if (keys.length < limit) keys.push(k);
    }
    const narrowed = KEYS.some(k => st[k] && k !== "u");  // "unexpected only" narrows nothing here
    $("#unexp-n").textContent = (narrowed ? n.toLocaleString("en-US") + " of " : "") + all.toLocaleString("en-US") +
      " unexpected result(s)" + (narrowed ? " in this view" : "");
    const more = $("#unexp-more");
    more.replaceChildren();
    if (n > limit) {
      const a = document.createElement("a");
      a.href = "#" + hashOf({...st, u: "1"}); a.textContent = "list them all";
      more.append(", the first " + limit + " (", a, ")");
    }
    ol.replaceChildren(...keys.map(unexpectedItem));
  }

  // ---- unsupported groups: headers built from the index when the section is first opened ----------------
  function buildUnsupported() {
    const box = $("#unsupported");
    if (!box || box.dataset.built || !R) return;
    box.dataset.built = "1";
    const frag = document.createDocumentFragment();
    G.forEach((g, i) => {
      if (S[g[1]] !== "unsupported") return;
      const d = document.createElement("details"), sm = document.createElement("summary");
      d.className = "grp c3 known-only"; d.id = "g" + i;
      const b = document.createElement("b"), n = document.createElement("span"), why = document.createElement("span");
      b.className = "tgt"; b.textContent = S[g[0]];
      n.className = "n"; n.textContent = g[4];
      why.className = "muted"; why.textContent = S[g[11]];
      sm.append(b, " · " + S[g[9]] + (S[g[10]] !== "out" ? " · " + S[g[10]] : "") + " · ", n, " case(s): ", why);
      d.append(sm);
      frag.append(d);
    });
    box.append(frag);
    apply(false);
  }

  // ---- a group's member list ----------------------------------------------------------------------
  function fmt(x) {  // %.3g with a plain exponent, as reports.model.ratio_text: 1.7, 5.57e15
    const r = +x.toPrecision(3), e = r ? Math.floor(Math.log10(Math.abs(r))) : 0;
    if (e >= -4 && e < 3) return String(r);
    const [m, p] = r.toExponential().split("e");
    return String(+(+m).toPrecision(3)) + "e" + (+p);
  }
  function row(k) {
    const r = R[k], d = document.createElement("details"), sm = document.createElement("summary");
    d.className = "res"; d.dataset.k = k;
    const id = document.createElement("span");
    id.className = "mono";
    id.textContent = S[r[0]] + "::" + S[r[1]] + (S[r[2]] !== "out" ? " [" + S[r[2]] + "]" : "");
    sm.append(id);
    if (r[4] & 4) sm.append(" · non-finite output");
    else if (r[3] !== null) sm.append(" · " + fmt(r[3]) + " x bound");
    const tag = (text, cls) => { const t = document.createElement("span"); t.className = "tag" + (cls ? " " + cls : ""); t.textContent = text; sm.append(" ", t); };
    if (r[4] & 1) tag("unexpected", "new");
    if (r[4] & 2) tag("new", "new");
    for (const t of S[r[6]] ? S[r[6]].split("|") : []) tag(t);
    const msg = document.createElement("span");
    msg.className = "muted"; msg.textContent = " " + S[r[7]];
    sm.append(msg);
    d.append(sm);
    return d;
  }
  function list(el, gi, upTo) {
    const g = G[gi];
    let box = el.querySelector(".members");
    if (!box) { box = document.createElement("div"); box.className = "members"; el.append(box); }
    const want = Math.max(PAGE, upTo === undefined ? 0 : upTo + 1, +(box.dataset.limit || 0));
    const keys = [];
    for (let k = g[3]; k < g[3] + g[4]; k++) if (!matched || matched[k]) keys.push(k);
    const sig = keys.length + ":" + keys[0] + ":" + keys[keys.length - 1] + ":" + want;
    if (box.dataset.sig === sig) return;
    box.dataset.sig = sig; box.dataset.limit = want;
    box.replaceChildren(...keys.slice(0, want).map(row));
    if (keys.length > want) {
      const more = document.createElement("button");
      more.type = "button"; more.className = "more";
      more.textContent = "show " + Math.min(PAGE, keys.length - want) + " more of " + (keys.length - want);
      more.addEventListener("click", () => { box.dataset.limit = want + PAGE; list(el, gi); });
      box.append(more);
    }
  }

  // ---- detail panels, decoded chunk by chunk -------------------------------------------------------
  function chunkOf(k) { let lo = 0, hi = C.length - 1; while (lo < hi) { const m = (lo + hi + 1) >> 1; if (C[m] <= k) lo = m; else hi = m - 1; } return lo; }
  async function fill(d) {
    if (d.dataset.filled) return;
    d.dataset.filled = "1";
    const k = +d.dataset.k, c = chunkOf(k);
    if (!chunkData.has(c)) chunkData.set(c, inflate(chunkText[c]));
    const bodies = await chunkData.get(c);
    d.insertAdjacentHTML("beforeend", bodies[k - C[c]]);
  }
  async function reveal(k) {
    const gi = rowGroup[k];
    if (S[G[gi][1]] === "unsupported") { $("#unsupported").open = true; buildUnsupported(); }
    const el = $("#g" + gi);
    if (!el) return;
    el.hidden = false; el.open = true;
    list(el, gi, k - G[gi][3]);
    const d = el.querySelector('details.res[data-k="' + k + '"]');
    if (!d) return;
    d.open = true; d.classList.add("hit");
    await fill(d);
    d.scrollIntoView({ block: "start" });
  }

  // ---- events -------------------------------------------------------------------------------------
  function fromHash() {
    const raw = location.hash.slice(1);
    if (raw && !raw.includes("=")) {  // a plain anchor (#known-x, #findings): filters stay; a known issue opens
      const t = document.getElementById(decodeURIComponent(raw));
      if (t && t.tagName === "DETAILS") { t.open = true; t.scrollIntoView(); }
      return false;
    }
    const h = new URLSearchParams(raw), st = {};
    for (const k of KEYS) st[k] = h.get(k) || "";
    setState(st);
    apply(false);
    const r = h.get("r");
    if (r !== null && R && +r >= 0 && +r < R.length) reveal(+r);
    else if (raw && R) $("#filters").scrollIntoView();
    return true;
  }
  for (const [k, el] of Object.entries(ctl)) el.addEventListener(k === "q" ? "input" : "change", () => apply());
  $("#f-clear").addEventListener("click", () => { setState({}); apply(); });
  window.addEventListener("hashchange", fromHash);
  document.addEventListener("click", (ev) => {  // a link to the view already in the URL changes no hash: apply it anyway
    const a = ev.target.closest('a[href^="#"]');
    if (a && a.getAttribute("href").includes("=") && a.getAttribute("href") === location.hash) fromHash();
  });
  $$(".fambar button").forEach(b => b.addEventListener("click", () => { ctl.f.value = b.dataset.fam; apply(); }));
  for (const t of $$("table.matrix")) {
    t.addEventListener("click", (ev) => {
      const td = ev.target.closest("td");
      if (!td || td.classList.contains("empty") || td.cellIndex < 1) return;
      const col = t.rows[0].cells[td.cellIndex].dataset.c, op = td.parentElement.cells[0].textContent;
      const badge = ev.target.closest("i[data-s]"), st = { o: op, s: badge ? badge.dataset.s : "" };
      if (col.startsWith("@")) st.f = col.slice(1);
      else { const cut = col.lastIndexOf("-"); st.f = t.dataset.fam; st.b = col.slice(0, cut); st.d = col.slice(cut + 1); }
      setState(st); apply();
      td.classList.add("sel");
      const open = $$("details.grp").filter(g => !g.hidden);
      if (open.length <= 3) open.forEach(g => { g.open = true; });
      $("#filters").scrollIntoView();
    });
  }
  document.addEventListener("toggle", (ev) => {
    const el = ev.target;
    if (!el.open || !R) return;
    if (el.id === "unsupported") buildUnsupported();
    else if (el.classList.contains("grp")) list(el, +el.id.slice(1));
    else if (el.classList.contains("res")) fill(el);
  }, true);
  document.addEventListener("click", (ev) => {
    const btn = ev.target.closest("button.copy");
    if (!btn) return;
    const pre = btn.parentElement.querySelector("pre." + btn.dataset.copy);
    const text = pre ? pre.textContent : "";
    const done = () => { btn.textContent = "copied"; setTimeout(() => { btn.textContent = "copy"; }, 1200); };
    const fallback = () => {
      const ta = document.createElement("textarea");
      ta.value = text; document.body.appendChild(ta); ta.select();
      try { document.execCommand("copy"); done(); } catch (e) { btn.textContent = "select and copy"; }
      ta.remove();
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
  });

  // ---- start: the page is usable at once; lists and filters once the index is decoded -------------------
  apply(false);
  if (typeof DecompressionStream === "undefined") {
    $("#jsnote").textContent = "This browser cannot decompress the report's data (it needs DecompressionStream: " +
      "Chrome 80+, Firefox 113+, Safari 16.4+): result lists, details and filters are unavailable.";
    document.body.dataset.ready = "no";
    return;
  }
  inflate($("#cd-index").textContent).then((idx) => {
    S = idx.s; G = idx.g; R = idx.r; C = idx.c; classes = idx.k;
    rowGroup = new Int32Array(R.length); rowText = new Array(R.length);
    G.forEach((g, i) => {
      for (let k = g[3]; k < g[3] + g[4]; k++) {
        const r = R[k];
        rowGroup[k] = i;
        rowText[k] = (S[r[0]] + " " + S[r[1]] + " " + S[r[2]] + " " + S[r[7]] + " " + S[g[6]]).toLowerCase();
      }
    });
    if (!fromHash()) apply(false);
    $$("details.grp[open]").forEach(el => list(el, +el.id.slice(1)));
    document.body.dataset.ready = "1";
  }).catch((e) => {
    $("#jsnote").textContent = "The report's data could not be decoded: " + e;
    document.body.dataset.ready = "no";
    throw e;
  });
})();
