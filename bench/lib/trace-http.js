/**
 * Preloaded into `n8n execute` by the diagnostics (NODE_OPTIONS=--require) to see where
 * a request's time goes from inside n8n: for every outgoing http request, when it was
 * created, got its socket connected, finished sending, got its answer's headers and its
 * last byte; and, every 50 ms, n8n's event-loop utilisation and process CPU time.
 * Written as JSON to $CLINIC_BENCH_TRACE when the process exits. Plain JS: n8n runs it.
 */
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const { performance } = require('node:perf_hooks');

const requests = [];
const samples = [];
const originalRequest = http.request;

http.request = function tracedRequest(...args) {
	const req = originalRequest.apply(this, args);
	const row = { created: performance.now() };
	requests.push(row);
	req.once('socket', (socket) => {
		if (socket.connecting) socket.once('connect', () => (row.connected = performance.now()));
		else row.connected = performance.now();
	});
	req.once('finish', () => (row.sent = performance.now()));
	req.once('response', (res) => {
		row.headers = performance.now();
		res.once('end', () => (row.done = performance.now()));
	});
	return req;
};

let previous = performance.eventLoopUtilization();
setInterval(() => {
	const current = performance.eventLoopUtilization();
	const delta = performance.eventLoopUtilization(current, previous);
	previous = current;
	const cpu = process.cpuUsage();
	samples.push({ at: performance.now(), active: delta.active, idle: delta.idle, cpuMicros: cpu.user + cpu.system });
}, 50).unref();

process.on('exit', () => {
	try {
		fs.writeFileSync(process.env.CLINIC_BENCH_TRACE, JSON.stringify({ requests, samples }));
	} catch {
		// nothing to report to
	}
});
