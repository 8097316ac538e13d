// SPDX-License-Identifier: BSD-3-Clause
// ewyk's dashboard: polls /api/snapshot every second (the raw telemetry
// replies), has model.js turn two readings into the figures (rates,
// shares, sums), and draws them with Chart.js (served by the exporter: the
// page loads nothing from elsewhere).
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
	const value = { stacked: !!opts.stacked, beginAtZero: true, max: opts.max };
	if (opts.log) {
		Object.assign(value, { type: "logarithmic", beginAtZero: false,
			title: { display: true, text: opts.log } });
	}
	const index = { stacked: !!opts.stacked, beginAtZero: true };
	return new Chart($(id), {
		type: "bar",
		data: { labels: [], datasets: series.map((s, i) => ({ label: s, data: [],
			backgroundColor: COLORS[(i + (opts.shift || 0)) % COLORS.length] })) },
		options: { animation: false, maintainAspectRatio: false, responsive: true,
			indexAxis: opts.horizontal ? "y" : "x",
			scales: opts.horizontal ? { x: value, y: index } : { x: index, y: value },
			plugins: { legend: { display: series.length > 1, position: "right",
				labels: { boxWidth: 10 } } } },
	});
}

const charts = {};

function setupCharts() {
	charts.lcores = barChart("c-lcores", ["producing", "consuming", "idle"],
		{ stacked: true, horizontal: true, max: 100 });
	charts.modes = lineChart("c-modes", EwykFigures.MODES, { stacked: true });
	charts.requests = lineChart("c-requests", ["HTTP/1.1", "HTTP/2"]);
	charts.latency = barChart("c-latency", ["p50", "p99"], { log: "µs" });
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

function touch(id) {
	const p = $(id);
	p.dataset.updates = String(Number(p.dataset.updates) + 1);
}

// Draws the figures of model.js: no figure is computed here.
function update(snap) {
	const st = $("status");
	const f = EwykFigures.figures(prev, snap);
	st.textContent = f.up ? "up" : "ewykd down";
	st.className = "badge " + (f.up ? "up" : "down");
	if (!f.up) { prev = null; return; }

	$("version").textContent = f.header.version || "–";
	$("dpdk").textContent = f.header.dpdk || "–";
	$("address").textContent = f.header.address;
	set("uptime", f.header.uptime_s, 0);
	set("rps", f.header.rps);
	if (!prev) { prev = snap; return; }	// rates need two readings

	labels.push(new Date(snap.time * 1000).toLocaleTimeString());
	while (labels.length > HISTORY) labels.shift();

	// lcores: share of the interval producing, consuming and idle.
	const lc = f.lcores;
	$("lcore-table").querySelector("tbody").innerHTML = lc.rows.map((l) =>
		`<tr><td class="num">${l.id}</td><td>${l.role}</td>` +
		`<td class="shard">${l.shard === null ? "–" : l.shard}</td>` +
		`<td class="doing-${l.doing}">${l.doing}</td>` +
		`<td class="num">${fmt(l.producing, 0)} %</td>` +
		`<td class="num">${fmt(l.consuming, 0)} %</td>` +
		`<td class="num">${fmt(l.idle, 0)} %</td>` +
		`<td class="num">${fmt(l.tasks_per_s)}</td></tr>`).join("");
	set("lc-tasks", lc.tasks_per_s);
	charts.lcores.data.labels = lc.rows.map((l) => "lcore " + l.id);
	charts.lcores.data.datasets.forEach((ds) => {
		ds.data = lc.rows.map((l) => l[ds.label]);
	});
	set("res-size", lc.reserved);
	set("res-pool", lc.pool);
	set("res-spin", lc.spinning);
	set("res-park", lc.parked);
	set("bp-threads", lc.blocking_threads);
	set("bp-queued", lc.blocking_queued);
	set("bp-tasks", lc.blocking_tasks_per_s);
	touch("p-lcores");

	// The mode mix.
	const m = f.modes;
	for (const k of EwykFigures.MODES) set("m-" + k, m[k]);
	set("m-lcores", m.on_lcores);
	set("m-steals", m.steals);
	push(charts.modes, Object.fromEntries(EwykFigures.MODES.map((k) => [k, m[k]])));
	touch("p-modes");

	// Requests by protocol and status.
	const rq = f.requests;
	set("r-http1", rq.http1);
	set("r-http2", rq.http2);
	set("r-5xx", rq.s5xx);
	set("r-503", rq.s503);
	push(charts.requests, rq.series);
	touch("p-requests");

	// Latency per route (since start), in microseconds on a log scale: a
	// static file's 2 us beside a handler's 50 ms.
	const lat = f.latency;
	charts.latency.data.labels = lat.routes.map((v) => v.path);
	charts.latency.data.datasets[0].data = lat.routes.map((v) => v.p50_us);
	charts.latency.data.datasets[1].data = lat.routes.map((v) => v.p99_us);
	// The axis starts a decade under the shortest bar, so that it shows.
	const least = Math.min(...lat.routes.map((v) => v.p50_us).filter((v) => v > 0));
	charts.latency.options.scales.y.min = Number.isFinite(least) ?
		Math.pow(10, Math.floor(Math.log10(least)) - 1) : 0.1;
	set("l-routes", lat.routes.length);
	set("l-worst", lat.worst_p99_us, 1);
	touch("p-latency");

	// Drops by reason: every reason seen since start.
	const dr = f.drops;
	charts.drops.data.labels = dr.reasons.length ? dr.reasons.map(([k]) => k) : ["(none)"];
	charts.drops.data.datasets[0].data = dr.reasons.length ?
		dr.reasons.map(([, v]) => v) : [0];
	set("d-total", dr.total);
	set("d-rate", dr.per_s);
	touch("p-drops");

	// Packets by family, and IPv6's neighbour discovery.
	const fam = f.family;
	set("f-rx4", fam.series["IPv4 in"]);
	set("f-tx4", fam.series["IPv4 out"]);
	set("f-rx6", fam.series["IPv6 in"]);
	set("f-tx6", fam.series["IPv6 out"]);
	set("f-conns6", fam.conns6);
	set("f-nd-in", fam.nd_in);
	set("f-nd-out", fam.nd_out);
	push(charts.family, fam.series);
	touch("p-family");

	// Connections.
	set("c-open", f.conns.open);
	set("c-rate", f.conns.accepted_per_s);
	set("c-refused", f.conns.refused);
	push(charts.conns, { open: f.conns.open, "accepted/s": f.conns.accepted_per_s });
	touch("p-conns");

	// mbufs.
	set("mb-use", f.mbufs.in_use);
	set("mb-size", f.mbufs.size);
	set("mb-pct", f.mbufs.pct, 1);
	push(charts.mbufs, { "in use": f.mbufs.in_use, "pool size": f.mbufs.size });
	touch("p-mbufs");

	// The store's conflating write-behind.
	const cf = f.conflate;
	if (cf) {
		const v = { "offers/s": cf.offers_per_s, "superseded/s": cf.superseded_per_s,
			"applied/s": cf.applied_per_s, "fsyncs/s": cf.fsyncs_per_s };
		set("cf-offers", cf.offers_per_s);
		set("cf-ratio", cf.superseded_pct, 1);
		set("cf-fsyncs", cf.fsyncs_per_s);
		set("cf-lag", cf.lag);
		push(charts.conflate, v);
		touch("p-conflate");
	}

	// TLS: handshakes by outcome, and the certificate that expires first.
	const tls = f.tls;
	if (tls) {
		set("t-full", tls.full_per_s);
		set("t-resumed", tls.resumed_per_s);
		set("t-failed", tls.failed_per_s);
		set("t-open", tls.open);
		set("t-expiry", tls.expiry_days, 1);
		push(charts.tls, { full: tls.full_per_s, resumed: tls.resumed_per_s,
			failed: tls.failed_per_s });
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
