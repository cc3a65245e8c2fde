/**
 * A jest reporter for every run (unit and end-to-end): once every test file has finished
 * and the report is written, the jest process may not go on waiting for a handle a test left open
 * (a timer, a socket, a child process). After GRACE_MS it names what is still open, then
 * ends the process with jest's verdict, so a lane never outlives its last test by more
 * than that. A run that ends by itself never gets here (the timer does not hold it).
 */
const { createHook } = require('node:async_hooks');

const GRACE_MS = 15_000;

/** Where each live timer was made (timers are not among Node's listed handles). */
const timerOrigins = new Map();
const hook = createHook({
	init(id, type) {
		if (type !== 'Timeout') return;
		const frames = (new Error().stack ?? '').split('\n').slice(1).filter((line) => /\/(test|bench|nodes|credentials)\//.test(line) && !line.includes('node_modules') && !line.includes(__filename));
		if (frames.length > 0) timerOrigins.set(id, frames.slice(0, 3).map((line) => line.trim()).join(' <- '));
	},
	destroy(id) {
		timerOrigins.delete(id);
	},
});

/** What an open handle is, in words a reader can trace to the code that made it. */
function describe(handle) {
	const type = handle?.constructor?.name ?? typeof handle;
	if (type === 'Socket' || type === 'TLSSocket') {
		return `${type} ${handle.localAddress ?? '?'}:${handle.localPort ?? '?'} -> ${handle.remoteAddress ?? '(listening or closed)'}:${handle.remotePort ?? ''}`;
	}
	if (type === 'Server') return `Server listening on ${JSON.stringify(handle.address?.())}`;
	if (type === 'ChildProcess') return `ChildProcess pid ${handle.pid}: ${(handle.spawnargs ?? []).join(' ').slice(0, 200)}`;
	if (type === 'Timeout') {
		const source = String(handle._onTimeout ?? '').replace(/\s+/g, ' ').slice(0, 200);
		return `Timeout of ${handle._idleTimeout} ms${handle._repeat ? ' (repeating)' : ''}: ${source}`;
	}
	return type;
}

class ExitGuard {
	constructor() {
		// Tracing every async resource slows promise-heavy unit tests; end-to-end lanes wait on
		// n8n, so there it costs nothing and names the test that left a timer.
		if (process.argv.includes('e2e')) hook.enable();
	}

	onRunComplete(_contexts, results) {
		const timer = setTimeout(() => {
			const handles = (process._getActiveHandles?.() ?? []).filter((handle) => handle !== timer && handle !== process.stdout && handle !== process.stderr && handle !== process.stdin);
			const lines = handles.map((handle) => `  - ${describe(handle)}`);
			for (const origin of timerOrigins.values()) lines.push(`  - Timeout made at ${origin}`);
			process.stderr.write(
				`\n[exit guard] jest was still running ${GRACE_MS / 1000} s after its last test file ended; open handles:\n` +
					`${lines.join('\n') || '  (none listed; resources: ' + process.getActiveResourcesInfo().join(', ') + ')'}\n` +
					'The test that left them must close them; ending the process now with the run\'s result.\n',
			);
			process.exit(results.success ? 0 : 1);
		}, GRACE_MS);
		timer.unref();
	}
}

module.exports = ExitGuard;
