// SPDX-License-Identifier: BSD-3-Clause
// The dashboard's figures, computed from two readings of /api/snapshot (the
// raw telemetry replies): every number the page shows comes from here, and
// dashboard.js only draws them. Nothing here touches the page, so node runs
// it too (tests/integration/test_dashboard_figures.py compares its figures
// with the telemetry and the exporter's /metrics).
"use strict";

(function (root, factory) {
	if (typeof module === "object" && module.exports)
		module.exports = factory();
	else
		root.EwykFigures = factory();
}(typeof self !== "undefined" ? self : this, function () {
	const MODES = ["pc", "pic", "pec", "epc", "fiber"];
	// Modes whose tasks run on an lcore (the shard's owner, or a reserved
	// lcore the shard was handed to); PEC's run on the blocking pool.
	const LCORE_MODES = ["pc", "pic", "epc", "fiber"];

	// A counter's rate between two readings dt seconds apart; null when
	// there is no earlier reading.
	function rate(cur, old, dt) {
		if (old === undefined || old === null || cur === undefined || cur === null ||
				dt <= 0)
			return null;
		return Math.max(0, (cur - old) / dt);
	}

	function sumShards(reply, key) {
		let t = 0;
		for (const s of Object.values(reply || {}))
			if (s && typeof s === "object") t += s[key] || 0;
		return t;
	}

	function lcoreKeys(lc) {
		// lcore_N in lcore order (the reply's order is the EAL's).
		return Object.keys(lc || {}).filter((k) => /^lcore_\d+$/.test(k));
	}

	// What an lcore did over the interval: the larger of producing and
	// consuming when it was busy a tenth of the time or more.
	function doing(l, d, total, reserved, res) {
		if (total > 0)
			return d.producing + d.consuming < total / 10 ? "idle" :
				d.consuming >= d.producing ? "consuming" : "producing";
		if (l.role === "main") return "monitoring";
		if (l.role === "reserved")
			return res.parked_lcores >= reserved && reserved > 0 ? "parked" :
				res.spinning_lcores >= reserved && reserved > 0 ? "spinning" :
				"reserved";
		return "idle";
	}

	function lcores(r, p, dt) {
		const lc = r["/ewyk/lcores"] || {}, pl = p["/ewyk/lcores"] || {};
		const res = r["/ewyk/reserved"] || {};
		const keys = lcoreKeys(lc);
		const reserved = keys.filter((k) => lc[k].role === "reserved").length;
		const rows = [];
		let tasks = 0;
		for (const key of keys) {
			const l = lc[key], o = pl[key] || l;
			const d = { producing: l.producing_us - o.producing_us,
				consuming: l.consuming_us - o.consuming_us,
				idle: l.idle_us - o.idle_us };
			const total = d.producing + d.consuming + d.idle;
			const pct = (x) => (total > 0 ? (100 * x) / total : 0);
			const t = rate(l.inline_tasks, pl[key] ? o.inline_tasks : null, dt);
			tasks += t || 0;
			rows.push({ id: Number(key.slice(6)), role: l.role,
				shard: l.owns_shard >= 0 ? l.owns_shard : null,
				doing: doing(l, d, total, reserved, res),
				producing: pct(d.producing), consuming: pct(d.consuming),
				idle: pct(d.idle), tasks_per_s: t });
		}
		return {
			rows,
			tasks_per_s: tasks,
			// The lcores listed as reserved: worker lcores owning no shard
			// now. The pool (size_lcores) is every worker lcore, the shard
			// owners included: it is not the reserved count.
			reserved,
			workers: keys.filter((k) => lc[k].role !== "main").length,
			pool: res.size_lcores,
			spinning: res.spinning_lcores,
			parked: res.parked_lcores,
			blocking_threads: res.blocking_threads,
			blocking_queued: res.blocking_queued_tasks,
			blocking_tasks_per_s: rate(res.blocking_executed_tasks,
				(p["/ewyk/reserved"] || {}).blocking_executed_tasks, dt),
		};
	}

	function modes(r, p, dt) {
		const st = r["/ewyk/strategy"] || {}, ps = p["/ewyk/strategy"];
		const m = {};
		for (const k of MODES)
			m[k] = ps ? rate(sumShards(st, k + "_tasks"), sumShards(ps, k + "_tasks"),
				dt) : null;
		m.on_lcores = ps ? LCORE_MODES.reduce((t, k) => t + m[k], 0) : null;
		m.steals = sumShards(st, "steals_count");	// since start
		return m;
	}

	function requests(r, p, dt) {
		const http = r["/ewyk/http"] || {}, ph = p["/ewyk/http"] || {};
		const series = { "HTTP/1.1": rate(http.http1_reqs, ph.http1_reqs, dt),
			"HTTP/2": rate(http.http2_reqs, ph.http2_reqs, dt) };
		const bs = http.by_status_reqs || {}, pbs = ph.by_status_reqs || {};
		let s5 = 0;
		for (const [code, v] of Object.entries(bs)) {
			const rt = rate(v, pbs[code], dt);
			if (code.startsWith("5")) s5 += rt || 0;
			if (v > 0) series[code] = rt;
		}
		return { series, http1: series["HTTP/1.1"], http2: series["HTTP/2"],
			s5xx: s5, s503: rate(bs["503"], pbs["503"], dt) };
	}

	// Per route, from ewykd's histograms (since start), in microseconds
	// with their fractions: telemetry keeps nanoseconds.
	function latency(r) {
		const http = r["/ewyk/http"] || {};
		const routes = Object.entries(http).filter(([k, v]) => k.startsWith("route_") &&
			v && typeof v === "object" && "p99_ns" in v && v.requests_reqs > 0)
			.map(([k, v]) => ({ key: k, path: v.path, requests: v.requests_reqs,
				p50_us: v.p50_ns / 1000, p90_us: v.p90_ns / 1000,
				p99_us: v.p99_ns / 1000, max_us: v.max_ns / 1000 }));
		return { routes, worst_p99_us: routes.reduce((m, v) => Math.max(m, v.p99_us), 0) };
	}

	function drops(r, p, dt) {
		const stats = r["/ewyk/stats"] || {}, ps = p["/ewyk/stats"] || {};
		const seen = Object.entries(stats.drop_by_reason_pkts || {})
			.filter(([, v]) => v > 0);
		return { reasons: seen, total: stats.drop_pkts,
			per_s: rate(stats.drop_pkts, ps.drop_pkts, dt) };
	}

	function family(r, p, dt) {
		const s = r["/ewyk/stats"] || {}, o = p["/ewyk/stats"] || {};
		const sum = (x, a, b) => (x[a] === undefined ? undefined : x[a] + x[b]);
		return {
			series: { "IPv4 in": rate(s.rx_ip4_pkts, o.rx_ip4_pkts, dt),
				"IPv4 out": rate(s.tx_ip4_pkts, o.tx_ip4_pkts, dt),
				"IPv6 in": rate(s.rx_ip6_pkts, o.rx_ip6_pkts, dt),
				"IPv6 out": rate(s.tx_ip6_pkts, o.tx_ip6_pkts, dt) },
			conns6: s.open_conns_ip6,
			nd_in: rate(sum(s, "nd_ns_in_pkts", "nd_na_in_pkts"),
				sum(o, "nd_ns_in_pkts", "nd_na_in_pkts"), dt),
			nd_out: rate(sum(s, "nd_ns_out_pkts", "nd_na_out_pkts"),
				sum(o, "nd_ns_out_pkts", "nd_na_out_pkts"), dt),
		};
	}

	function conns(r, p, dt) {
		const s = r["/ewyk/stats"] || {}, h = r["/ewyk/http"] || {};
		const ph = p["/ewyk/http"] || {};
		return { open: s.open_conns, accepted_per_s: rate(h.accepted_conns,
			ph.accepted_conns, dt), refused: s.refused_conns };
	}

	function mbufs(r) {
		const s = r["/ewyk/stats"] || {};
		return { in_use: s.mbufs_in_use_mbufs, size: s.mbufs_total_mbufs,
			pct: 100 * s.mbufs_in_use_mbufs / (s.mbufs_total_mbufs || 1) };
	}

	function conflate(r, p, dt) {
		const cf = r["/ewyk/conflate"];
		if (!cf) return null;
		const pc = p["/ewyk/conflate"] || {};
		return { offers_per_s: rate(cf.offers_count, pc.offers_count, dt),
			superseded_per_s: rate(cf.superseded_count, pc.superseded_count, dt),
			applied_per_s: rate(cf.applied_count, pc.applied_count, dt),
			fsyncs_per_s: rate(cf.fsyncs_count, pc.fsyncs_count, dt),
			superseded_pct: cf.offers_count ?
				100 * cf.superseded_count / cf.offers_count : 0,
			lag: cf.lag_versions };
	}

	// Handshakes by outcome and the certificate that expires first; null
	// without a TLS port.
	function tls(r, p, dt) {
		const t = r["/ewyk/tls"];
		if (!t || !t.enabled) return null;
		const pt = p["/ewyk/tls"] || {};
		return { full_per_s: rate(t.handshakes_full_count, pt.handshakes_full_count, dt),
			resumed_per_s: rate(t.handshakes_resumed_count, pt.handshakes_resumed_count,
				dt),
			failed_per_s: rate(t.handshakes_failed_count, pt.handshakes_failed_count, dt),
			open: t.open_conns, expiry_days: t.cert_expires_in_s / 86400 };
	}

	// The figures of one reading (snap) against the one before (prev, or
	// null: then rates are null).
	function figures(prev, snap) {
		const r = snap.replies || {};
		const up = snap.up === 1;
		const p = prev && prev.up === 1 ? prev.replies || {} : {};
		const dt = prev && prev.up === 1 ? snap.time - prev.time : 0;
		const info = r["/ewyk/info"] || {};
		const http = r["/ewyk/http"] || {};
		const f = { up, dt };
		if (!up) return f;
		f.header = { version: info.version, dpdk: (info.dpdk || "").replace(/^DPDK /, ""),
			address: `${info.ip || "?"} port ${info.listen_port || "?"} on ` +
				`${info.port_name || "?"}`,
			uptime_s: (info.uptime_ms || 0) / 1000,
			rps: rate(http.requests_reqs, (p["/ewyk/http"] || {}).requests_reqs, dt) };
		f.lcores = lcores(r, p, dt);
		f.modes = modes(r, p, dt);
		f.requests = requests(r, p, dt);
		f.latency = latency(r);
		f.drops = drops(r, p, dt);
		f.family = family(r, p, dt);
		f.conns = conns(r, p, dt);
		f.mbufs = mbufs(r);
		f.conflate = conflate(r, p, dt);
		f.tls = tls(r, p, dt);
		return f;
	}

	return { figures, rate, MODES, LCORE_MODES };
}));
