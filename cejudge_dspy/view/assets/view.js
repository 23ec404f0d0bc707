// cejudge view: renders the inlined run data. Every text from a run goes in through textContent
// (never innerHTML); the only markup inserted as HTML is the SVG that vl-convert drew at build time.
"use strict";

const DATA = JSON.parse(document.getElementById("cejudge-data").textContent);
const OUTCOME_ORDER = ["correct", "wrong", "tie", "gold tie", "no gold", "scored", "abstained", "unparsed", "error"];
const state = { tab: 0, selected: null };

// ---------- small DOM helpers ----------
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
const fmt = (v, digits = 3) =>
  v === null || v === undefined ? "–" : typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(digits)) : String(v);
const pct = (v) => (v === null || v === undefined ? "–" : `${(100 * v).toFixed(1)}%`);
const int = (v) => (v === null || v === undefined ? "–" : Number(v).toLocaleString("en"));
const badge = (text, cls) => el("span", { class: `badge ${cls || String(text).replace(/\s+/g, "-")}`, text });
function decisionText(d) {
  if (!d) return "argmax";
  const counts = (obj) => Object.entries(obj || {}).map(([k, v]) => `${k.replace(/_/g, " ")} ${v}`).join(", ");
  return [d.rule + (d.tie_band !== null && d.tie_band !== undefined ? ` (tie band ${d.tie_band})` : ""),
    d.decided_by ? `decided: ${counts(d.decided_by)}` : null, d.probabilities ? `probabilities: ${counts(d.probabilities)}` : null]
    .filter(Boolean).join(" · ");
}
function svgChart(svg, cls) {
  const box = el("div", { class: `chart ${cls || ""}` });
  box.innerHTML = svg; // drawn by vl-convert from our own specification
  return box;
}

// ---------- tabs ----------
function tabs() {
  const nav = document.getElementById("tabs");
  const names = DATA.runs.map((r) => r.overview.name);
  if (DATA.comparison) names.push("Comparison");
  nav.replaceChildren(
    ...names.map((name, i) =>
      el("button", {
        class: "tab", role: "tab", type: "button", "aria-selected": String(i === state.tab), text: name,
        onclick: () => { state.tab = i; closeDrawer(); render(); },
      }),
    ),
  );
}

function render() {
  tabs();
  const main = document.getElementById("main");
  main.replaceChildren();
  if (state.tab < DATA.runs.length) renderRun(main, DATA.runs[state.tab]);
  else renderComparison(main, DATA.comparison);
}

// ---------- one run ----------
function renderRun(main, run) {
  const o = run.overview, s = run.summary;
  const facts = [
    ["task", `${o.task} (${o.mode}, metric: ${o.metric})`], ["method", o.method], ["backbone", o.backbone],
    ["program", o.program], ["decision rule", decisionText(o.decision)], ["items", `${o.n_items} · ok ${o.n_ok} · unparsed ${o.n_unparsed} · errors ${o.n_error}` + (o.n_missing ? ` · missing ${o.n_missing}` : "") + (o.n_abstained !== null && o.n_abstained !== undefined ? ` · abstained ${o.n_abstained} (confidence below ${o.abstain_below})` : "")],
    ["LM calls", `${int(o.calls)} (${int(o.cached)} cached)`],
    ["tokens", `${int(o.prompt_tokens)} prompt · ${int(o.completion_tokens)} completion`],
    ["item time (sum)", `${fmt(o.item_seconds, 1)} s`],
    ...(o.timing
      ? [["started", o.timing.started], ["finished", o.timing.finished],
         ["duration", `${fmt(o.timing.wall_seconds, 1)} s wall` + (o.timing.sessions > 1 ? ` over ${o.timing.sessions} sessions` : "")]]
      : [["last record written", o.last_written]]),
    ["run directory", o.path],
  ];
  const settings = el("table", { class: "kv" },
    el("tbody", {}, Object.entries(o.settings).map(([k, v]) =>
      el("tr", {}, el("td", { text: k }), el("td", { class: "id", text: v === null ? "–" : typeof v === "object" ? JSON.stringify(v) : String(v) })))));
  main.append(el("section", { class: "card", id: "overview" },
    el("h1", { text: `${o.task} · ${o.method}` }),
    el("div", { class: "subtitle", text: `${o.name} — ${o.backbone || "?"}` }),
    el("div", { class: "facts" }, facts.map(([k, v]) => el("div", { class: "fact" }, el("div", { class: "k", text: k }), el("div", { class: "v", text: v ?? "–" })))),
    el("details", { class: "settings" }, el("summary", { text: "All run settings (run.json)" }), settings)));

  main.append(el("section", { class: "stats", id: "stats" }, statCards(run)));

  const charts = el("section", { class: "charts", id: "charts" });
  for (const [key, svg] of Object.entries(run.charts)) {
    charts.append(svgChart(svg, key === "answers" || key === "scatter" ? "wide" : ""));
    charts.lastChild.dataset.chart = key;
  }
  if (run.charts && Object.keys(run.charts).length) main.append(charts);
  if (s.dimensions) main.append(dimensionTable(s.dimensions));
  main.append(itemsSection(run));
}

function statCards(run) {
  const s = run.summary, o = run.overview, cards = [];
  const stat = (k, v, n, cls) => el("div", { class: `stat ${cls || ""}` }, el("div", { class: "k", text: k }), el("div", { class: "v", text: v }), n ? el("div", { class: "n", text: n }) : null);
  const metricNote = (m) => (m ? `${m.ci_low !== null && m.ci_low !== undefined ? `95% CI [${fmt(m.ci_low)}, ${fmt(m.ci_high)}] · ` : ""}n ${m.n}${m.reason ? ` · ${m.reason}` : ""}` : "");
  cards.push(stat(`${s.metric} · macro average`, fmt(s.average), `${Object.keys(s.per_language || {}).length} language(s)`));
  if (s.overall) cards.push(stat(`${s.metric} · all items`, fmt(s.overall.value), metricNote(s.overall)));
  if (o.mode === "pairwise") {
    if (s.position_consistency) cards.push(stat("position consistency", pct(s.position_consistency.value), "same verdict in both orders"));
    if (s.share_shown_A) cards.push(stat("A said (shown order)", pct(s.share_shown_A.value), "0.5 = no position preference"));
    if (s.share_final_A) cards.push(stat("final verdict A", pct(s.share_final_A.value)));
    const byBand = o.decision && o.decision.rule === "probability"; // a probability tie lies inside the tie band
    if (s.share_tie) cards.push(stat(byBand ? "ties (p(A) inside the tie band)" : "ties (orders disagree)", pct(s.share_tie.value), `${run.filters.outcomes.tie || 0} item(s)`));
  }
  const rules = s.decision_rules;
  if (rules) {
    for (const rule of ["argmax", "probability"]) {
      const r = rules[rule] || {};
      const m = r.overall || ((r.dimensions || {}).overall || {}).spearman;
      cards.push(el("div", { class: "stat rule", "data-rule": rule }, el("div", { class: "k", text: `${s.metric} · ${rule} rule` }),
        el("div", { class: "v", text: fmt(m ? m.value : null) }),
        el("div", { class: "n", text: o.mode === "pairwise" && r.share_tie ? `ties ${pct(r.share_tie.value)}` : r.constant_dimensions ? `constant dimensions ${r.constant_dimensions.length}` : r.distinct_scores !== undefined ? `${r.distinct_scores} distinct scores` : "" })));
    }
    const cal = rules.calibration;
    if (cal && cal.n) {
      const band = cal.tie_band_on_these_items || {};
      cards.push(stat("calibration error (ECE)", fmt(cal.ece), `${cal.n} items · best tie band here ${fmt(band.tie_band, 2)}`));
    }
  }
  const sel = s.selective;
  if (sel && sel.aurc !== undefined && sel.n > sel.n_without_confidence) cards.push(stat("AURC (selective judging)", fmt(sel.aurc), `oracle ${fmt(sel.optimal_aurc)} · excess ${fmt(sel.excess_aurc)} · confidence: ${sel.confidence}`));
  if (o.n_abstained !== null && o.n_abstained !== undefined) cards.push(stat("abstained", String(o.n_abstained), `confidence below ${o.abstain_below}: left to a person, excluded from metrics`, o.n_abstained ? "warn" : ""));
  cards.push(stat("unparsed", String(o.n_unparsed), "excluded from metrics", o.n_unparsed ? "warn" : ""));
  cards.push(stat("errors", String(o.n_error), "rerun resumes these", o.n_error ? "bad" : ""));
  return cards;
}

function dimensionTable(dims) {
  const names = ["spearman", "kendall", "pearson"];
  const cell = (m) => (m && typeof m === "object" ? (m.value === null ? el("span", { class: "muted", title: m.reason || "", text: "n/a" }) : fmt(m.value)) : "–");
  return el("section", { class: "card" }, el("h2", { text: "Correlation with humans per dimension (sample level | per document)" }),
    el("table", {}, el("thead", {}, el("tr", {}, el("th", { text: "dimension" }), el("th", { class: "num", text: "n" }), names.map((n) => el("th", { class: "num", text: n })))),
      el("tbody", {}, Object.entries(dims).map(([dim, row]) => el("tr", {}, el("td", { text: dim }), el("td", { class: "num", text: fmt(row.n) }),
        names.map((n) => el("td", { class: "num" }, cell(row[n]), row[`${n}_per_document`] ? [" | ", cell(row[`${n}_per_document`])] : [])))))));
}

// ---------- items table ----------
function itemsSection(run) {
  const pairwise = run.overview.mode === "pairwise";
  const f = run.filters;
  const search = el("input", { type: "search", id: "search", placeholder: "Search id, texts, feedback, checklists…" });
  const lang = el("select", { id: "language" }, el("option", { value: "", text: "all languages" }), f.languages.map((l) => el("option", { value: l, text: l })));
  const outcomes = el("div", { class: "chips", id: "outcomes" }, OUTCOME_ORDER.filter((x) => f.outcomes[x]).map((x) =>
    el("label", { class: "chip" }, el("input", { type: "checkbox", value: x, checked: true }), badge(x), el("span", { class: "count", text: f.outcomes[x] }))));
  const range = f.score_range;
  const lo = el("input", { type: "number", id: "score-min", step: "any", placeholder: range ? String(range[0]) : "min" });
  const hi = el("input", { type: "number", id: "score-max", step: "any", placeholder: range ? String(range[1]) : "max" });
  const shown = el("span", { class: "shown", id: "shown" });
  const filters = el("div", { class: "filters" }, search, lang, outcomes,
    range ? el("span", {}, "judge score ", lo, " – ", hi) : null, shown);

  const cols = [
    ["id", "id"], ["language", "language"], ["gold", "gold"], ["judge", pairwise ? "verdict" : "score"],
    // A panel's run: the members' votes and the share agreeing, beside the panel's verdict.
    ...(run.rows.some((r) => r.votes !== undefined) ? [["votes", "votes"], ["agreement", "agreement", "num"]] : []),
    ...(pairwise ? [["verdict_AB", "A/B"], ["verdict_BA", "B/A"]] : []),
    ...(run.rows.some((r) => r.decided_by) ? [...(pairwise ? [["p_A", "p(A)", "num"]] : []), ["argmax", "argmax"]] : []),
    ["outcome", "outcome"], ["seconds", "seconds", "num"], ["calls", "calls", "num"],
  ];
  const tbody = el("tbody");
  const rows = run.rows.map((row) => {
    const tr = el("tr", { "data-id": row.id, onclick: () => openItem(run, row.id, tr) },
      cols.map(([key, , cls]) => {
        const v = row[key];
        if (key === "outcome") return el("td", {}, badge(v));
        if (key === "id") return el("td", { class: "id", text: v });
        return el("td", { class: cls || "", text: key === "seconds" ? fmt(v, 2) : fmt(v) });
      }));
    return { row, tr, haystack: haystack(run, row) };
  });
  tbody.append(...rows.map((r) => r.tr));
  let sortKey = null, sortDir = 1;
  const head = el("tr", {}, cols.map(([key, label, cls]) => el("th", {
    class: `sortable ${cls || ""}`, text: label, title: "sort",
    onclick: () => {
      sortDir = sortKey === key ? -sortDir : 1; sortKey = key;
      rows.sort((a, b) => compare(a.row[key], b.row[key]) * sortDir);
      tbody.append(...rows.map((r) => r.tr));
    },
  })));
  const table = el("table", { id: "items" }, el("thead", {}, head), tbody);

  function apply() {
    const q = search.value.trim().toLowerCase();
    const wanted = new Set([...outcomes.querySelectorAll("input:checked")].map((i) => i.value));
    const min = lo.value === "" ? -Infinity : Number(lo.value), max = hi.value === "" ? Infinity : Number(hi.value);
    const ranged = lo.value !== "" || hi.value !== "";
    let n = 0;
    for (const { row, tr, haystack: h } of rows) {
      const ok = (!lang.value || row.language === lang.value) && wanted.has(row.outcome) && (!q || h.includes(q)) &&
        (!ranged || (typeof row.judge === "number" && row.judge >= min && row.judge <= max));
      tr.hidden = !ok;
      n += ok;
    }
    shown.textContent = `showing ${n} of ${rows.length}`;
  }
  for (const input of [search, lang, lo, hi]) input.addEventListener("input", apply);
  outcomes.addEventListener("change", apply);
  apply();
  return el("section", { class: "card", id: "items-card" }, el("h2", { text: "Items" }), filters, el("div", { class: "table-wrap" }, table));
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true });
}

function haystack(run, row) {
  const item = DATA.items[row.id] || {}, rec = run.records[row.id] || {}, res = rec.result || {};
  const parts = [row.id, item.instruction, item.response, item.response_a, item.response_b, res.feedback, rec.error, res.error,
    ...Object.values(res.translations || {}), ...Object.values(res.checklists || {}).flat(), ...(res.orders || []).map((o) => o.feedback)];
  return parts.filter(Boolean).join("\n").toLowerCase();
}

// ---------- item detail ----------
function closeDrawer() {
  document.getElementById("drawer").hidden = true;
  document.body.classList.remove("drawer-open");
  document.querySelectorAll("#items tr.selected").forEach((tr) => tr.classList.remove("selected"));
}

function openItem(run, id, tr) {
  document.querySelectorAll("#items tr.selected").forEach((x) => x.classList.remove("selected"));
  if (tr) tr.classList.add("selected");
  const item = DATA.items[id] || {}, rec = run.records[id] || {}, res = rec.result || {};
  const row = run.rows.find((r) => r.id === id) || {};
  document.getElementById("drawer-title").replaceChildren(el("div", { class: "id", text: id }),
    el("div", {}, badge(row.outcome), " ", badge(row.language || item.language || "?", "lang"), " ", badge(rec.status)));
  const body = document.getElementById("drawer-body");
  body.replaceChildren(...itemDetail(run, item, rec, res, row));
  document.getElementById("drawer").hidden = false;
  document.body.classList.add("drawer-open");
  body.scrollTop = 0;
}

function textBlock(label, text, translation) {
  return el("div", {}, el("div", { class: "label", text: label }), el("pre", { class: "text", text: text ?? "–" }),
    translation ? [el("div", { class: "label", text: `${label} (translated)` }), el("pre", { class: "text translation", text: translation })] : []);
}

function checklistBlock(name, res) {
  const parts = (res.checklist_parts || {})[name];
  const list = (qs) => el("ol", { class: "checklist" }, (qs || []).map((q) => el("li", { text: q })));
  if (parts && Object.keys(parts).length)
    return el("div", { class: "checklist-block", "data-response": name }, Object.entries(parts).map(([dir, qs]) =>
      [el("div", { class: "label", text: `${name}: ${dir.replace(/_/g, " ")} (${qs.length})` }), list(qs)]));
  return el("div", { class: "checklist-block", "data-response": name }, el("div", { class: "label", text: `${name} (${res.checklists[name].length})` }), list(res.checklists[name]));
}

// What the judge's token probabilities said, beside its argmax answer; nothing for records without them.
function probabilitySection(res, pairwise) {
  const p = res.probabilities, kept = res.argmax || {};
  if (!p) return [];
  const kv = (rows) => el("table", { class: "kv" }, el("tbody", {}, rows.filter(Boolean).map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { text: v })))));
  const out = [el("h3", { text: "Token probabilities" })];
  const head = [["decided by", `${res.decision} rule`], ["probabilities", p.status.replace(/_/g, " ") + (p.reason ? ` (${p.reason})` : "")]];
  if (pairwise) {
    out.push(kv([...head, ...(p.status === "ok" ? [["p(A)", fmt(p.p_a)], ["confidence", fmt(p.confidence)], ["tie band", fmt(p.tie_band)],
      ["probability verdict", fmt(p.verdict)]] : []), ["argmax verdict", fmt(kept.verdict)]]));
    return [el("div", { class: "probabilities" }, out)];
  }
  const dims = (res.details || {}).dimensions;
  if (dims && typeof dims === "object" && !Array.isArray(dims)) { // G-Eval: one Likert call per dimension
    out.push(kv(head), el("table", { class: "geval" }, el("thead", {}, el("tr", {}, ["dimension", "argmax", "expected", "distribution"].map((h) => el("th", { text: h })))),
      el("tbody", {}, Object.entries(dims).map(([d, r]) => el("tr", { "data-dimension": d }, el("td", { text: d }), el("td", { class: "num", text: fmt(r.score) }),
        el("td", { class: "num", text: fmt(r.expected) }),
        el("td", {}, r.probabilities === "ok" ? distribution(r.distribution) : el("span", { class: "muted", text: r.reason || r.probabilities })))))));
  } else if (p.dimension_scores && Object.keys(p.dimension_scores).length) { // CheckEval: mean P(yes) per dimension
    out.push(kv([...head, ...Object.entries(p.dimension_scores).map(([d, v]) => [d, `mean P(yes) ${fmt(v)} · share of Yes ${fmt((kept.dimension_scores || {})[d])}`])]));
  } else {
    out.push(kv([...head, ...(p.status === "ok" ? [["expected score", fmt(p.score)]] : []), ["argmax score", fmt(kept.score)]]));
    if (p.distribution && Object.keys(p.distribution).length) out.push(distribution(p.distribution));
  }
  return [el("div", { class: "probabilities" }, out)];
}

// A panel's record: each member's vote (and p(A) or score), status and cost, with the item's agreement.
function panelSection(rec, res, pairwise) {
  const members = rec.members, panel = (res.details || {}).panel;
  if (!members || !panel) return [];
  const votes = panel.votes || {}, pa = panel.p_a || {};
  const head = ["member", pairwise ? "vote" : "score", ...(pairwise ? ["p(A)"] : []), "status", "LM calls", "seconds"];
  const rows = members.map((m) => el("tr", { "data-member": m.name }, el("td", { text: m.name }), el("td", { class: "num", text: fmt(votes[m.name]) }),
    pairwise ? el("td", { class: "num", text: fmt(pa[m.name]) }) : null, el("td", {}, badge(m.status)),
    el("td", { class: "num", text: fmt(((m.result || {}).usage || {}).calls) }), el("td", { class: "num", text: fmt(m.seconds, 2) })));
  const said = [`outcome ${fmt(panel.outcome)}`, `agreement ${fmt(panel.agreement)} of ${panel.voting} voting`, `entropy ${fmt(panel.entropy)} bits`,
    ...(pairwise ? [`mean p(A) ${fmt(panel.mean_p_a)} → ${fmt(panel.mean_verdict)}`] : [`sd ${fmt(panel.sd)}`, `range ${fmt(panel.range)}`])];
  return [el("h3", { text: `Panel (${members.length} members)` }), el("p", { class: "muted panel-agreement", text: said.join(" · ") }),
    el("table", { class: "panel-votes" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))), el("tbody", {}, rows))];
}

function distribution(dist) {
  return el("table", { class: "distribution" }, el("tbody", {}, Object.entries(dist).map(([level, q]) => el("tr", { "data-level": level },
    el("td", { class: "num", text: level }), el("td", { class: "num", text: fmt(q) }),
    el("td", { class: "bar-cell" }, el("div", { class: "bar", style: `width:${(100 * q).toFixed(1)}%` }))))));
}

function itemDetail(run, item, rec, res, row) {
  const out = [];
  const pairwise = item.mode === "pairwise";
  const gold = item.label && typeof item.label === "object" ? Object.entries(item.label).map(([k, v]) => `${k} ${fmt(v, 2)}`).join(" · ") : fmt(item.label);
  out.push(el("div", { class: "verdict-line" },
    el("div", {}, el("div", { class: "label", text: "human label" }), el("strong", { text: gold })),
    el("div", {}, el("div", { class: "label", text: pairwise ? "judge verdict" : "judge score" }), el("strong", { text: fmt(pairwise ? res.verdict : res.score) })),
    pairwise ? el("div", {}, el("div", { class: "label", text: "consistent across orders" }), el("strong", { text: fmt(res.consistent) })) : null,
    el("div", {}, el("div", { class: "label", text: "seconds" }), el("strong", { text: fmt(rec.seconds, 2) }))));

  out.push(...panelSection(rec, res, pairwise));
  out.push(...probabilitySection(res, pairwise));

  // What went wrong, first: the stage, the reason, the raw output.
  const problems = [];
  if (rec.status === "error") problems.push(["error", rec.error, null]);
  if (res.error) problems.push([`unparsed at stage ${res.error_stage || "?"}`, res.error, (res.details || {}).raw]);
  for (const o of res.orders || []) if (o.error || o.raw) problems.push([`order ${o.order}`, o.error, o.raw]);
  // CheckEval: one box per distinct failure reason, naming the question groups that hit it.
  const byReason = new Map();
  for (const [group, reason] of Object.entries((res.details || {}).failures || {})) byReason.set(reason, [...(byReason.get(reason) || []), group]);
  for (const [reason, groups] of byReason) problems.push([`${groups.length} question group(s) failed: ${groups.join(", ")}`, reason, null]);
  for (const [title, reason, raw] of problems)
    out.push(el("div", { class: "problem" }, el("strong", { text: title }), el("div", { text: reason || "" }), raw ? el("pre", { text: raw }) : null));

  const tr = res.translations || {};
  out.push(el("h3", { text: "What the judge saw" }), textBlock("instruction", item.instruction, tr.instruction));
  if (pairwise) out.push(el("div", { class: "cols" }, textBlock("response A", item.response_a, tr.a || tr.response_a), textBlock("response B", item.response_b, tr.b || tr.response_b)));
  else out.push(textBlock(`response${item.response_language ? ` (${item.response_language})` : ""}`, item.response, tr.response));

  if (res.concepts && Object.keys(res.concepts).length)
    out.push(el("h3", { text: "Concepts" }), el("div", { class: "concepts" }, Object.entries(res.concepts).map(([k, cs]) =>
      el("div", {}, el("span", { class: "muted", text: `${k}: ` }), cs.length ? cs.map((c) => el("span", { text: c })) : "–"))));

  const lists = Object.keys(res.checklists || {});
  if (lists.length) out.push(el("h3", { text: "Checklists" }), el("div", { class: lists.length > 1 ? "cols" : "" }, lists.map((name) => checklistBlock(name, res))));

  // --reference: the judge's own answer (pairwise) or translation (pointwise), written before it read the
  // response(s); the grades or the judgment read it.
  const ref = (res.details || {}).reference;
  if (ref) out.push(el("p", { class: "reference" },
    el("span", { class: "muted", text: `the judge's own ${res.mode === "pairwise" ? "answer" : "translation"}, written first: ` }),
    ref.answer ? el("q", { text: ref.answer }) : el("span", { class: "muted", text: `none (${ref.error})` })));

  const grades = Object.entries(res.grades || {});
  if (grades.length) {
    // The graded judgment: each response judged alone; the orders below ran only if the grades tied.
    const by = (res.decided_by || {})[res.decision] || "";
    out.push(el("h3", { text: "Grades (each response judged on its own)" }),
      el("p", { class: "muted", text: by === "grades" ? "The grades decided this item: no order was shown." : "The grades did not separate the two: the pairwise judgment decided." }));
    for (const [name, g] of grades)
      out.push(el("div", { class: "grade", "data-response": name },
        el("strong", { text: `${name.toUpperCase()}: ${g.label === null ? "no grade" : g.label}` }),
        g.p_value !== null && g.p_value !== undefined ? el("span", { class: "p-first", text: ` · expected grade ${fmt(g.p_value)}` }) : null,
        g.error ? el("span", { class: "muted", text: ` · ${g.error}` }) : null,
        g.feedback ? el("p", { text: g.feedback }) : null));
  }

  if ((res.orders || []).length) {
    out.push(el("h3", { text: "Judgment per order" }));
    for (const o of res.orders)
      out.push(el("div", { class: "order", "data-order": o.order },
        el("div", {}, el("strong", { text: `order ${o.order}` }), ` · said ${fmt(o.shown_verdict)} → verdict ${fmt(o.verdict)}`,
          o.p_first !== null && o.p_first !== undefined ? el("span", { class: "p-first", text: ` · P(first better) ${fmt(o.p_first)}` })
            : o.probability_error ? el("span", { class: "muted", text: ` · no probability (${o.probability_error})` }) : null),
        o.feedback ? el("p", { text: o.feedback }) : null,
        o.answers && o.answers.length ? [el("div", { class: "label", text: "checklist answers" }), el("ol", { class: "checklist" }, o.answers.map((a) => el("li", { text: a })))] : null));
  } else if (!grades.length && (res.feedback || (res.answers || []).length)) {
    out.push(el("h3", { text: "Judgment" }), res.feedback ? el("p", { text: res.feedback }) : null,
      (res.answers || []).length ? el("ol", { class: "checklist" }, res.answers.map((a) => el("li", { text: a }))) : null);
  }

  const answers = (res.details || {}).answers;
  if (Array.isArray(answers) && answers.length) {
    out.push(el("h3", { text: "CheckEval answers" }));
    if (res.dimension_scores && Object.keys(res.dimension_scores).length)
      out.push(el("p", {}, Object.entries(res.dimension_scores).map(([k, v]) => [badge(`${k} ${fmt(v, 2)}`, "scored"), " "])));
    const withP = answers.some((a) => a.p_yes !== null && a.p_yes !== undefined);
    out.push(el("table", { class: "answers" }, el("thead", {}, el("tr", {}, ["dimension", "sub-dimension", "question", "answer", ...(withP ? ["P(yes)"] : [])].map((h) => el("th", { text: h })))),
      el("tbody", {}, answers.map((a) => el("tr", {}, el("td", { text: a.dimension }), el("td", { text: a.subdimension }), el("td", { text: a.question }),
        el("td", {}, a.answer === null || a.answer === undefined ? badge("none", "none") : badge(String(a.answer).toLowerCase())),
        withP ? el("td", { class: "num p-yes", text: fmt(a.p_yes) }) : null)))));
  }

  const u = res.usage;
  if (u) out.push(el("h3", { text: "Usage" }), el("table", { class: "kv" }, el("tbody", {},
    el("tr", {}, el("td", { text: "LM calls" }), el("td", { text: `${u.calls} (${u.cached} cached, ${u.reused} reused)` })),
    el("tr", {}, el("td", { text: "tokens" }), el("td", { text: `${int(u.prompt_tokens)} prompt · ${int(u.completion_tokens)} completion` })),
    Object.entries(u.by_stage || {}).map(([k, v]) => el("tr", {}, el("td", { text: `calls · ${k}` }), el("td", { text: v }))))));

  out.push(el("details", {}, el("summary", { class: "muted", text: "raw record (JSON)" }),
    el("pre", { class: "raw", text: JSON.stringify({ item, ...rec }, null, 2) })));
  return out;
}

// ---------- comparison ----------
function renderComparison(main, c) {
  if (c.note) { main.append(el("section", { class: "card" }, el("p", { text: c.note }))); return; }
  main.append(el("section", { class: "card" }, el("h1", { text: "Comparison" }), el("div", { class: "subtitle", text: c.names.join(" · ") })));
  if (c.chart) main.append(el("section", { class: "charts" }, svgChart(c.chart, "wide")));
  for (const t of c.tests) {
    const testName = c.metric === "accuracy" ? "McNemar exact p" : "paired bootstrap: difference (p)";
    main.append(el("section", { class: "card compare-test" },
      el("h2", { text: `${t.a} vs ${t.b}` }),
      el("div", { class: "subtitle", text: `${t.common_items} common items · only in ${t.a}: ${t.only_a} · only in ${t.b}: ${t.only_b}` }),
      el("table", {}, el("thead", {}, el("tr", {}, [t.by || "language", "n", t.a, t.b, "agreement", testName].map((h, i) => el("th", { class: i ? "num" : "", text: h })))),
        el("tbody", {}, t.rows.map((r) => el("tr", {}, el("td", { text: r.language }), el("td", { class: "num", text: r.n }),
          el("td", { class: "num", text: fmt(r.a.value) }), el("td", { class: "num", text: fmt(r.b.value) }), el("td", { class: "num", text: fmt(r.agreement.value) }),
          el("td", { class: "num", text: c.metric === "accuracy" ? fmt(r.test.p_value) : `${fmt(r.test.value)} (p ${fmt(r.test.p_value)})` })))))));
  }
  const d = c.disagreements;
  const tbody = el("tbody", {}, d.map((x) => el("tr", { "data-id": x.id },
    el("td", { class: "id", text: x.id }), el("td", { text: x.language }), el("td", { text: fmt(x.gold) }),
    c.names.map((n) => el("td", { text: fmt(x.predictions[n]) })),
    el("td", {}, c.names.map((n, i) => el("button", { class: "button", type: "button", style: "padding:2px 8px;margin-right:4px", text: `open in ${n}`,
      onclick: () => { state.tab = i; render(); const tr = document.querySelector(`#items tr[data-id="${CSS.escape(x.id)}"]`); openItem(DATA.runs[i], x.id, tr); } }))))));
  main.append(el("section", { class: "card", id: "disagreements" }, el("h2", { text: `Items where the runs disagree (${d.length})` }),
    el("div", { class: "table-wrap" }, el("table", {}, el("thead", {}, el("tr", {}, ["id", "language", "gold", ...c.names, ""].map((h) => el("th", { text: h })))), tbody))));
}

// ---------- CSV download ----------
document.getElementById("download-csv").addEventListener("click", () => {
  const url = URL.createObjectURL(new Blob([DATA.csv], { type: "text/csv;charset=utf-8" }));
  const a = el("a", { href: url, download: DATA.runs.length === 1 ? `${DATA.runs[0].overview.name}.csv` : "cejudge-runs.csv" });
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
});
document.getElementById("drawer-close").addEventListener("click", closeDrawer);
document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeDrawer(); });
render();
