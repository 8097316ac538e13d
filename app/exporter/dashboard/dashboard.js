// SPDX-License-Identifier: BSD-3-Clause
// ewyk's dashboard: polls /api/snapshot every second (the raw telemetry
// replies), turns counters into rates between two readings, and draws
// them with Chart.js (served by the exporter: the page loads nothing from
// elsewhere).
"use strict";

const HISTORY = 60;
const COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
let prev = null;
const labels = [];

function $(id) { return document.getElementById(id); }

function fmt(v, digits) {
	if (v === null || v === undefined || Number.isNaN(v)) return "–";
	if (digits === undefined) digits = Math.abs(v) >= 100 || Number.isInteger(v) ? 0 : 1;
	return v.toLocaleString("en-US", { maximumFractionDigits: digits,
		minimumFractionDigits: 0 });
}

function set(id, v, digits) { $(id).textContent = fmt(v, digits); }

function lineChart(id, series, opts) {
	opts = opts || {};
	return new Chart($(id), {
		type: "line",
		data: { labels, datasets: series.map((s, i) => ({
			label: s, data: [], borderColor: COLORS[i % COLORS.length],
			backgroundColor: COLORS[i % COLORS.length] + "55", pointRadius: 0,
			borderWidth: 2, fill: !!opts.stacked, tension: 0.2 })) },
		options: { animation: false, maintainAspectRatio: false, responsive: true,
			scales: { x: { display: false }, y: { beginAtZero: true,
				stacked: !!opts.stacked } },
			plugins: { legend: { position: "right", labels: { boxWidth: 10 } } } },
	});
}

function barChart(id, series, opts) {
	opts = opts || {};
	return new Chart($(id), {
		type: "bar",
		data: { labels: [], datasets: series.map((s, i) => ({ label: s, data: [],
			backgroundColor: COLORS[(i + (opts.shift || 0)) % COLORS.length] })) },
		options: { animation: false, maintainAspectRatio: false, responsive: true,
			indexAxis: opts.horizontal ? "y" : "x",
			scales: { x: { stacked: !!opts.stacked, beginAtZero: true,
				max: opts.max }, y: { stacked: !!opts.stacked, beginAtZero: true } },
			plugins: { legend: { display: series.length > 1, position: "right",
				labels: { boxWidth: 10 } } } },
	});
}

const charts = {};

function setupCharts() {
	charts.lcores = barChart("c-lcores", ["producing", "consuming", "idle"],
		{ stacked: true, horizontal: true, max: 100 });
	charts.modes = lineChart("c-modes", ["pc", "pic", "pec", "epc"], { stacked: true });
	charts.requests = lineChart("c-requests", ["HTTP/1.1", "HTTP/2"]);
	charts.latency = barChart("c-latency", ["p50", "p99"]);
	charts.drops = barChart("c-drops", ["packets"], { horizontal: true, shift: 3 });
	charts.family = lineChart("c-family", ["IPv4 in", "IPv4 out", "IPv6 in",
		"IPv6 out"]);
	charts.conns = lineChart("c-conns", ["open", "accepted/s"]);
	charts.mbufs = lineChart("c-mbufs", ["in use", "pool size"]);
	charts.conflate = lineChart("c-conflate", ["offers/s", "superseded/s", "applied/s",
		"fsyncs/s"]);
	charts.tls = lineChart("c-tls", ["full", "resumed", "failed"], { stacked: true });
}

// Appends one point per dataset (by label), adding datasets that are new.
function push(chart, values) {
	for (const [name, v] of Object.entries(values)) {
		let ds = chart.data.datasets.find((d) => d.label === name);
		if (ds === undefined) {
			const c = COLORS[chart.data.datasets.length % COLORS.length];
			ds = { label: name, data: new Array(labels.length - 1).fill(null),
				borderColor: c, backgroundColor: c + "55", pointRadius: 0,
				borderWidth: 2, tension: 0.2 };
			chart.data.datasets.push(ds);
		}
		ds.data.push(v);
	}
	for (const ds of chart.data.datasets) {
		while (ds.data.length < labels.length) ds.data.push(null);
		while (ds.data.length > labels.length) ds.data.shift();
	}
}

function rate(cur, old, dt) {
	if (old === undefined || old === null || cur === undefined || dt <= 0) return null;
	return Math.max(0, (cur - old) / dt);
}

function sumShards(reply, key) {
	let t = 0;
	for (const s of Object.values(reply || {})) t += s[key] || 0;
	return t;
}

function touch(id) {
	const p = $(id);
	p.dataset.updates = String(Number(p.dataset.updates) + 1);
}

function update(snap) {
	const r = snap.replies || {};
	const up = snap.up === 1;
	const st = $("status");
	st.textContent = up ? "up" : "ewykd down";
	st.className = "badge " + (up ? "up" : "down");
	if (!up) { prev = null; return; }
	const p = prev ? prev.replies : {};
	const dt = prev ? snap.time - prev.time : 0;
	const info = r["/ewyk/info"] || {}, stats = r["/ewyk/stats"] || {};
	const http = r["/ewyk/http"] || {}, strat = r["/ewyk/strategy"] || {};
	const res = r["/ewyk/reserved"] || {}, lc = r["/ewyk/lcores"] || {};
	const cf = r["/ewyk/conflate"];
	const ph = p["/ewyk/http"] || {}, ps = p["/ewyk/stats"] || {};

	$("version").textContent = info.version || "–";
	$("dpdk").textContent = (info.dpdk || "–").replace(/^DPDK /, "");
	$("address").textContent = `${info.ip || "?"} port ${info.listen_port || "?"} on ` +
		`${info.port_name || "?"}`;
	set("uptime", (info.uptime_ms || 0) / 1000, 0);
	set("rps", rate(http.requests_reqs, ph.requests_reqs, dt));
	if (!prev) { prev = snap; return; }	// rates need two readings

	labels.push(new Date(snap.time * 1000).toLocaleTimeString());
	while (labels.length > HISTORY) labels.shift();

	// lcores: share of the last second producing, consuming and idle.
	const tbody = $("lcore-table").querySelector("tbody");
	const rows = [], bars = { producing: [], consuming: [], idle: [] }, names = [];
	const pl = p["/ewyk/lcores"] || {};
	const spare = Object.values(lc).filter((l) => l.role === "reserved" &&
		l.owns_shard < 0).length;
	for (const [key, l] of Object.entries(lc)) {
		const o = pl[key] || l;
		const d = { producing: l.producing_us - o.producing_us,
			consuming: l.consuming_us - o.consuming_us, idle: l.idle_us - o.idle_us };
		const total = d.producing + d.consuming + d.idle;
		const pct = (x) => (total > 0 ? (100 * x) / total : 0);
		let doing;
		if (total > 0) {
			// Busy a tenth of the second or more: the larger of the two.
			doing = d.producing + d.consuming < total / 10 ? "idle" :
				d.consuming >= d.producing ? "consuming" : "producing";
		} else if (l.role === "main") {
			doing = "monitoring";
		} else if (l.role === "reserved") {
			doing = res.parked_lcores >= spare && spare > 0 ? "parked" :
				res.spinning_lcores >= spare && spare > 0 ? "spinning" : "reserved";
		} else {
			doing = "idle";
		}
		const id = key.replace("lcore_", "");
		names.push("lcore " + id);
		for (const k of Object.keys(bars)) bars[k].push(pct(d[k]));
		rows.push(`<tr><td class="num">${id}</td><td>${l.role}</td>` +
			`<td class="shard">${l.owns_shard >= 0 ? l.owns_shard : "–"}</td>` +
			`<td class="doing-${doing}">${doing}</td>` +
			`<td class="num">${fmt(pct(d.producing), 0)} %</td>` +
			`<td class="num">${fmt(pct(d.consuming), 0)} %</td>` +
			`<td class="num">${fmt(pct(d.idle), 0)} %</td>` +
			`<td class="num">${fmt(rate(l.inline_tasks, o.inline_tasks, dt))}</td></tr>`);
	}
	tbody.innerHTML = rows.join("");
	charts.lcores.data.labels = names;
	charts.lcores.data.datasets.forEach((ds) => { ds.data = bars[ds.label]; });
	set("res-size", res.size_lcores);
	set("res-spin", res.spinning_lcores);
	set("res-park", res.parked_lcores);
	set("bp-threads", res.blocking_threads);
	set("bp-queued", res.blocking_queued_tasks);
	touch("p-lcores");

	// The mode mix.
	const pstrat = p["/ewyk/strategy"] || {};
	const modes = {};
	for (const m of ["pc", "pic", "pec", "epc"]) {
		modes[m] = rate(sumShards(strat, m + "_tasks"), sumShards(pstrat, m + "_tasks"), dt);
		set("m-" + m, modes[m]);
	}
	set("m-steals", sumShards(strat, "steals_count"));
	push(charts.modes, modes);
	touch("p-modes");

	// Requests by protocol and status.
	const req = { "HTTP/1.1": rate(http.http1_reqs, ph.http1_reqs, dt),
		"HTTP/2": rate(http.http2_reqs, ph.http2_reqs, dt) };
	set("r-http1", req["HTTP/1.1"]);
	set("r-http2", req["HTTP/2"]);
	const bs = http.by_status_reqs || {}, pbs = ph.by_status_reqs || {};
	let s5 = 0;
	for (const [code, v] of Object.entries(bs)) {
		const rt = rate(v, pbs[code], dt);
		if (code.startsWith("5")) s5 += rt || 0;
		if (v > 0) req[code] = rt;
	}
	set("r-5xx", s5);
	set("r-503", rate(bs["503"], pbs["503"], dt));
	push(charts.requests, req);
	touch("p-requests");

	// Latency per route, from ewykd's histograms (since start).
	const routes = Object.values(http).filter((v) => v && typeof v === "object" &&
		"p99_us" in v && v.requests_reqs > 0);
	charts.latency.data.labels = routes.map((v) => v.path);
	charts.latency.data.datasets[0].data = routes.map((v) => v.p50_us / 1000);
	charts.latency.data.datasets[1].data = routes.map((v) => v.p99_us / 1000);
	set("l-routes", routes.length);
	set("l-worst", routes.reduce((m, v) => Math.max(m, v.p99_us / 1000), 0), 3);
	touch("p-latency");

	// Drops by reason: every reason seen since start.
	const drops = stats.drop_by_reason_pkts || {};
	const seen = Object.entries(drops).filter(([, v]) => v > 0);
	charts.drops.data.labels = seen.length ? seen.map(([k]) => k) : ["(none)"];
	charts.drops.data.datasets[0].data = seen.length ? seen.map(([, v]) => v) : [0];
	set("d-total", stats.drop_pkts);
	set("d-rate", rate(stats.drop_pkts, ps.drop_pkts, dt));
	touch("p-drops");

	// Packets by family, and IPv6's neighbour discovery.
	const fam = { "IPv4 in": rate(stats.rx_ip4_pkts, ps.rx_ip4_pkts, dt),
		"IPv4 out": rate(stats.tx_ip4_pkts, ps.tx_ip4_pkts, dt),
		"IPv6 in": rate(stats.rx_ip6_pkts, ps.rx_ip6_pkts, dt),
		"IPv6 out": rate(stats.tx_ip6_pkts, ps.tx_ip6_pkts, dt) };
	set("f-rx4", fam["IPv4 in"]);
	set("f-tx4", fam["IPv4 out"]);
	set("f-rx6", fam["IPv6 in"]);
	set("f-tx6", fam["IPv6 out"]);
	set("f-conns6", stats.open_conns_ip6);
	set("f-nd-in", rate(stats.nd_ns_in_pkts + stats.nd_na_in_pkts,
		ps.nd_ns_in_pkts + ps.nd_na_in_pkts, dt));
	set("f-nd-out", rate(stats.nd_ns_out_pkts + stats.nd_na_out_pkts,
		ps.nd_ns_out_pkts + ps.nd_na_out_pkts, dt));
	push(charts.family, fam);
	touch("p-family");

	// Connections.
	const acc = rate(http.accepted_conns, ph.accepted_conns, dt);
	set("c-open", stats.open_conns);
	set("c-rate", acc);
	set("c-refused", stats.refused_conns);
	push(charts.conns, { open: stats.open_conns, "accepted/s": acc });
	touch("p-conns");

	// mbufs.
	set("mb-use", stats.mbufs_in_use_mbufs);
	set("mb-size", stats.mbufs_total_mbufs);
	set("mb-pct", 100 * stats.mbufs_in_use_mbufs / (stats.mbufs_total_mbufs || 1), 1);
	push(charts.mbufs, { "in use": stats.mbufs_in_use_mbufs,
		"pool size": stats.mbufs_total_mbufs });
	touch("p-mbufs");

	// The store's conflating write-behind.
	if (cf) {
		const pc = p["/ewyk/conflate"] || {};
		const v = { "offers/s": rate(cf.offers_count, pc.offers_count, dt),
			"superseded/s": rate(cf.superseded_count, pc.superseded_count, dt),
			"applied/s": rate(cf.applied_count, pc.applied_count, dt),
			"fsyncs/s": rate(cf.fsyncs_count, pc.fsyncs_count, dt) };
		set("cf-offers", v["offers/s"]);
		set("cf-ratio", cf.offers_count ? 100 * cf.superseded_count / cf.offers_count : 0, 1);
		set("cf-fsyncs", v["fsyncs/s"]);
		set("cf-lag", cf.lag_versions);
		push(charts.conflate, v);
		touch("p-conflate");
	}

	// TLS: handshakes by outcome, and the certificate that expires first.
	const tls = r["/ewyk/tls"];
	if (tls && tls.enabled) {
		const pt = p["/ewyk/tls"] || {};
		const v = { full: rate(tls.handshakes_full_count, pt.handshakes_full_count, dt),
			resumed: rate(tls.handshakes_resumed_count, pt.handshakes_resumed_count, dt),
			failed: rate(tls.handshakes_failed_count, pt.handshakes_failed_count, dt) };
		set("t-full", v.full);
		set("t-resumed", v.resumed);
		set("t-failed", v.failed);
		set("t-open", tls.open_conns);
		set("t-expiry", tls.cert_expires_in_s / 86400, 1);
		push(charts.tls, v);
		touch("p-tls");
	}

	for (const c of Object.values(charts)) c.update("none");
	prev = snap;
}

async function poll() {
	try {
		const res = await fetch("/api/snapshot", { cache: "no-store" });
		update(await res.json());
	} catch (e) {
		const st = $("status");
		st.textContent = "exporter unreachable";
		st.className = "badge down";
	}
	setTimeout(poll, 1000);
}

setupCharts();
poll();
