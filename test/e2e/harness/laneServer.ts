/**
 * One n8n a version for the test files of a lane that need nothing but this package and
 * n8n's defaults (`useClinicN8n({ laneServer: true })`): the first such file starts it, the
 * next ones add their credentials and workflows to it through its REST API, and the lane's
 * jest teardown stops it. Each `n8n start` costs seconds of CPU; on two cores that is the
 * suite's budget. Jest gives every test file modules of its own, so the n8n's coordinates
 * go through a file, and the process is known by its pid only (`releaseProcess`):
 *   <tmpdir>/n8n-e2e-lanes/<jest's pid>/<version>.json
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ensureN8n } from './install';
import { N8nContext, createN8nContext, type N8nContextOptions } from './context';
import { currentTestPath, pidAlive, recordProcess, releaseProcess, stopPid } from './processes';
import { N8nServer } from './server';

interface LaneServerFile {
	version: string;
	pid: number;
	port: number;
	rootDir: string;
	logFile: string;
	auth: N8nContext['auth'];
	startedAt: number;
	/** The test file that started it (the process report names it). */
	startedBy?: string;
}

/** Written by `N8nContext.dispose` when a test using the lane's n8n failed: the folder is kept. */
const FAILED_MARKER = '.failed';

const laneDir = () => join(tmpdir(), 'n8n-e2e-lanes', String(process.pid));
const laneFile = (version: string) => join(laneDir(), `${version}.json`);

function readLaneServer(version: string): LaneServerFile | undefined {
	const file = laneFile(version);
	if (!existsSync(file)) return undefined;
	const lane = JSON.parse(readFileSync(file, 'utf8')) as LaneServerFile;
	if (pidAlive(lane.pid)) return lane;
	rmSync(file, { force: true });
	return undefined;
}

/**
 * The context of the lane's n8n of `options.version` when one runs (`laneServer` set: attach
 * with `attachLaneServer`), or a new context whose n8n `shareWithLane` hands on.
 */
export async function createLaneContext(options: N8nContextOptions): Promise<N8nContext> {
	const lane = readLaneServer(options.version);
	if (!lane) {
		const ctx = await createN8nContext({ ...options, label: 'lane' });
		ctx.sharedByLane = true;
		return ctx;
	}
	const ctx = new N8nContext(options, ensureN8n(options.version), lane.rootDir, lane.port);
	ctx.auth = lane.auth;
	ctx.sharedByLane = true;
	ctx.laneServer = { pid: lane.pid, logFile: lane.logFile };
	return ctx;
}

/** The lane's running n8n, for a context made by `createLaneContext` that found one. */
export function attachLaneServer(ctx: N8nContext): N8nServer {
	if (!ctx.laneServer) throw new Error('no lane server for this context (createLaneContext started none)');
	return new N8nServer(ctx, ctx.laneServer.pid, ctx.laneServer.logFile);
}

/** Hands the n8n this file started on to the lane's next files; returns it known by its pid. */
export function shareWithLane(ctx: N8nContext, server: N8nServer, startedAt: number): N8nServer {
	if (!server.child?.pid) throw new Error('shareWithLane: the server was not started by this file');
	const { pid } = server.child;
	releaseProcess(server.child);
	ctx.forget(server.child);
	const lane: LaneServerFile = {
		version: ctx.version,
		pid,
		port: ctx.port,
		rootDir: ctx.rootDir,
		logFile: server.logFile,
		auth: ctx.auth,
		startedAt,
		startedBy: currentTestPath(),
	};
	mkdirSync(laneDir(), { recursive: true });
	writeFileSync(laneFile(ctx.version), JSON.stringify(lane), 'utf8');
	ctx.laneServer = { pid, logFile: server.logFile };
	const shared = new N8nServer(ctx, pid, server.logFile);
	shared.startupMs = server.startupMs;
	return shared;
}

/**
 * CPU seconds of this process and the children it reaped (jest's CPU reporter,
 * test/helpers/cpuReport.cjs), or undefined off Linux.
 */
const { cpuSeconds } = require('../../helpers/cpuReport.cjs') as { cpuSeconds: () => { own: number; children: number } | undefined };

/**
 * The lane server's CPU, counted once it is reaped (after the lane's last file): charged to
 * the file that started it, in the CPU log the e2e report reads (N8N_E2E_CPU_LOG).
 */
function recordCpu(lane: LaneServerFile, before: ReturnType<typeof cpuSeconds>): void {
	const after = cpuSeconds();
	const file = process.env.N8N_E2E_CPU_LOG;
	if (!file || !before || !after || !lane.startedBy) return;
	const line = { file: lane.startedBy, wallSeconds: 0, jestCpuSeconds: 0, childCpuSeconds: Math.round(after.children - before.children) };
	appendFileSync(file, `${JSON.stringify(line)}\n`);
}

/** The lane's teardown: stops every lane server of this jest process, removes their folders. */
export async function stopLaneServers(): Promise<void> {
	if (!existsSync(laneDir())) return;
	for (const name of readdirSync(laneDir())) {
		const lane = JSON.parse(readFileSync(join(laneDir(), name), 'utf8')) as LaneServerFile;
		const before = cpuSeconds();
		await stopPid(lane.pid, 20_000);
		recordCpu(lane, before);
		const { nodeBin, n8nBin } = ensureN8n(lane.version);
		recordProcess(nodeBin, [n8nBin, 'start'], lane.startedAt, lane.startedBy);
		if (existsSync(join(lane.rootDir, FAILED_MARKER)) || process.env.N8N_E2E_KEEP === '1') {
			process.stderr.write(`n8n e2e: kept ${lane.rootDir}\n`);
		} else {
			rmSync(lane.rootDir, { recursive: true, force: true, maxRetries: 3 });
		}
	}
	rmSync(laneDir(), { recursive: true, force: true });
}
