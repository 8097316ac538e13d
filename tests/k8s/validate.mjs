// SPDX-License-Identifier: BSD-3-Clause
// Validates every manifest of deploy/k8s against Kubernetes' API schemas
// (kubernetes-models: the OpenAPI schemas of the Kubernetes API, compiled
// and bundled in the package; nothing is downloaded), the ServiceMonitor
// against the Prometheus Operator's CRD schema, and the Multus
// NetworkAttachmentDefinition against its CRD's schema (nad-crd.json).
// Then checks what the fleet relies on: Guaranteed QoS with whole CPUs,
// hugepages, the SR-IOV VF, the Multus network, the exporter sidecar and
// its scrape, a PodDisruptionBudget, and a grace period longer than
// ewykd's drain. Prints one line per object; exits 1 on any failure.
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import Ajv from "ajv";

const dir = process.argv[2];
const here = path.dirname(new URL(import.meta.url).pathname);
const nadSchema = JSON.parse(fs.readFileSync(path.join(here, "nad-crd.json"), "utf8"));
const nadValidate = new Ajv({ allErrors: true, strict: false }).compile(nadSchema);

async function model(apiVersion, kind) {
	const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
	if (group === "monitoring.coreos.com")
		return (await import(`@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`))[kind];
	const where = group === "" ? version : `${group}/${version}`;
	return (await import(`kubernetes-models/${where}/${kind}`))[kind];
}

let failed = 0;
const objects = [];
for (const file of fs.readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort()) {
	for (const doc of YAML.parseAllDocuments(fs.readFileSync(path.join(dir, file), "utf8"))) {
		const obj = doc.toJS();
		if (obj === null) continue;
		const what = `${file}: ${obj.kind}/${obj.metadata?.name}`;
		try {
			if (doc.errors.length) throw new Error(doc.errors.join("; "));
			if (obj.apiVersion === "k8s.cni.cncf.io/v1" &&
					obj.kind === "NetworkAttachmentDefinition") {
				if (!nadValidate(obj))
					throw new Error(JSON.stringify(nadValidate.errors));
				JSON.parse(obj.spec.config);	// the CNI configuration is JSON
			} else {
				const M = await model(obj.apiVersion, obj.kind);
				if (M === undefined) throw new Error(`no schema for ${obj.apiVersion} ${obj.kind}`);
				new M(obj).validate();
			}
			objects.push(obj);
			console.log(`ok   ${what}`);
		} catch (e) {
			failed++;
			console.log(`FAIL ${what}: ${e.message}`);
		}
	}
}

function check(ok, msg) {
	console.log(`${ok ? "ok  " : "FAIL"} ${msg}`);
	if (!ok) failed++;
}

const ds = objects.find((o) => o.kind === "DaemonSet");
const cm = objects.find((o) => o.kind === "ConfigMap");
check(ds !== undefined, "a DaemonSet runs the fleet");
if (ds) {
	const pod = ds.spec.template;
	const cs = pod.spec.containers;
	for (const c of cs) {
		const r = c.resources || {}, req = r.requests || {}, lim = r.limits || {};
		check(["cpu", "memory"].every((k) => lim[k] !== undefined && String(req[k]) === String(lim[k])),
			`${c.name}: requests equal limits (Guaranteed QoS)`);
		check(/^[0-9]+$/.test(String(lim.cpu)), `${c.name}: whole CPUs (static CPU manager pins them)`);
	}
	const ewykd = cs.find((c) => c.name === "ewykd");
	const res = ewykd.resources.limits;
	check(Object.keys(res).some((k) => k.startsWith("hugepages-")), "ewykd: hugepages");
	const vf = Object.keys(res).find((k) => k.includes("/"));
	check(vf !== undefined, `ewykd: an SR-IOV VF from the device plugin (${vf})`);
	const nets = pod.metadata.annotations?.["k8s.v1.cni.cncf.io/networks"];
	const nad = objects.find((o) => o.kind === "NetworkAttachmentDefinition" &&
		o.metadata.name === nets);
	check(nad !== undefined, `Multus network ${nets} defined`);
	check(nad?.metadata.annotations?.["k8s.v1.cni.cncf.io/resourceName"] === vf,
		"the network's resourceName is the VF the pod requests");
	check(cs.some((c) => c.name === "exporter" && c.ports?.some((p) => p.containerPort === 9110)),
		"the exporter runs as a sidecar on 9110");
	check(pod.metadata.annotations?.["prometheus.io/scrape"] === "true" ||
		objects.some((o) => o.kind === "ServiceMonitor"), "metrics are scraped");
	const drain = Number((/^\s*drain-ms\s*=\s*(\d+)/m.exec(cm?.data?.["ewykd.conf"] || "") || [])[1]);
	check(drain > 0 && pod.spec.terminationGracePeriodSeconds * 1000 >= drain + 5000,
		`terminationGracePeriodSeconds ${pod.spec.terminationGracePeriodSeconds} s covers ` +
		`drain-ms ${drain} and 5 s more`);
	const cfgVol = pod.spec.volumes.find((v) => v.configMap?.name === cm?.metadata.name);
	check(cfgVol !== undefined, "the configuration comes from the ConfigMap");
}
const pdb = objects.find((o) => o.kind === "PodDisruptionBudget");
check(pdb && ds && Object.entries(pdb.spec.selector.matchLabels).every(
	([k, v]) => ds.spec.template.metadata.labels[k] === v), "a PodDisruptionBudget covers the pods");
console.log(failed ? `${failed} failed` : "all valid");
process.exit(failed ? 1 : 0);
