/**
 * Preloaded into `n8n execute` (NODE_OPTIONS="--expose-gc --require ...") by section 4:
 * right after the Nth answer of the process's outgoing http requests has arrived whole
 * (N from $CLINIC_BENCH_HEAP_AT, e.g. "50,500"), forces a full garbage collection and
 * records the live heap. What is still live then is what the run holds, not garbage
 * waiting for the collector (which is what makes RSS grow). Written as JSON to
 * $CLINIC_BENCH_HEAP_FILE when the process exits, by the process that took samples (n8n's
 * task runner inherits NODE_OPTIONS too). Plain JS: n8n runs it.
 */
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const v8 = require('node:v8');

const at = new Set((process.env.CLINIC_BENCH_HEAP_AT || '').split(',').map(Number).filter(Boolean));
const samples = [];
const originalRequest = http.request;
let requests = 0;
let answers = 0;

function sample(answer) {
	global.gc();
	samples.push({ answer, liveHeapBytes: v8.getHeapStatistics().used_heap_size });
}

http.request = function probedRequest(...args) {
	requests += 1;
	const request = originalRequest.apply(this, args);
	request.once('response', (response) =>
		response.once('end', () => {
			answers += 1;
			if (at.has(answers) && typeof global.gc === 'function') setImmediate(sample, answers);
		}),
	);
	return request;
};

process.on('exit', () => {
	if (samples.length === 0) return;
	try {
		fs.writeFileSync(process.env.CLINIC_BENCH_HEAP_FILE, JSON.stringify({ requests, answers, samples }));
	} catch {
		// nothing to report to
	}
});
