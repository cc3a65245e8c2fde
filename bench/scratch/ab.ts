// scratch A/B: variants interleaved, medians
import { benchContext, importCredentials, importWorkflows, timedExecute } from '../lib/n8n';
import { startBenchSimulator, fetchAccessToken } from '../lib/sim';
import { consultationGetWorkflow } from '../consultations';
import { httpRequestNode, itemsThen, MEASURED } from '../lib/workflows';

async function main() {
	const rounds = Number(process.env.ROUNDS ?? 4);
	const spec = (process.env.VARIANTS ?? 'c1@0,h@0').split(',');
	const sim = await startBenchSimulator();
	const ctx = await benchContext('2.41.1');
	const bearer = await fetchAccessToken(sim);
	const ids = new Map<string, string>();
	const creds = [];
	const wfs = [];
	for (const v of spec) {
		const [kind] = v.split(':')[0].split('@');
		if (kind.startsWith('c')) {
			const { credential, workflow } = consultationGetWorkflow(sim, `ab ${v}`, 1000, Number(kind.slice(1)));
			creds.push(credential); wfs.push(workflow); ids.set(v, workflow.id!);
		} else {
			const w = itemsThen(`ab ${v}`, 1000, httpRequestNode(`=${sim.apiBaseUrl}/consultations/{{ $json.id }}`, bearer));
			wfs.push(w); ids.set(v, w.id!);
		}
	}
	await importCredentials(ctx, creds); await importWorkflows(ctx, wfs);
	const res = new Map<string, number[]>();
	for (let r = 0; r <= rounds; r++) {
		for (const v of spec) {
			sim.setLatency(Number(v.split(':')[0].split('@')[1]));
			const env: Record<string, string> = {};
			for (const kv of v.split(':').slice(1)) { const [k, x] = kv.split('='); env[`CLINIC_${k}`] = x; }
			const run = await timedExecute(ctx, ids.get(v)!, MEASURED, { env });
			const ips = 1000 / (run.nodeMs / 1000);
			if (r > 0) res.set(v, [...(res.get(v) ?? []), ips]);
			console.error(`${v} r${r} ${ips.toFixed(0)} items/s cpu ${run.cpuMs}`);
		}
	}
	for (const [v, l] of res) { const s = [...l].sort((a, b) => a - b); console.log(v, 'median', s[Math.floor(s.length / 2)].toFixed(0), l.map((x) => x.toFixed(0)).join(' ')); }
	await ctx.dispose(); await sim.close();
}
main().catch((e) => { console.error(e); process.exit(1); });
