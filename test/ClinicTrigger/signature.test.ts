import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
	constantTimeEquals,
	deliveryIdOf,
	headerValue,
	verifyDelivery,
} from '../../nodes/ClinicTrigger/signature';

const secret = 'a'.repeat(64);
const body = Buffer.from('{"value":{"id":7,"name":"Ana"}}', 'utf8');
const good = createHmac('sha256', secret).update(body).digest('hex');

describe('signature verification over the raw bytes', () => {
	it('accepts the right signature, in any hex letter case, with stray spaces', () => {
		expect(verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers: { signature: good }, secret })).toBe(true);
		expect(
			verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers: { signature: ` ${good.toUpperCase()} ` }, secret }),
		).toBe(true);
	});

	it('refuses a signature of other bytes (one changed byte, re-serialised JSON)', () => {
		const tampered = Buffer.from(body.toString().replace('Ana', 'Anb'));
		expect(verifyDelivery({ mode: 'hmacSha256', rawBody: tampered, headers: { signature: good }, secret })).toBe(false);
		const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 1));
		expect(verifyDelivery({ mode: 'hmacSha256', rawBody: reserialised, headers: { signature: good }, secret })).toBe(false);
	});

	it('refuses a signature made with another secret', () => {
		const other = createHmac('sha256', 'b'.repeat(64)).update(body).digest('hex');
		expect(verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers: { signature: other }, secret })).toBe(false);
	});

	it('refuses malformed signatures without throwing (short, long, not hex, sha256= prefix)', () => {
		for (const signature of [good.slice(0, 63), `${good}0`, 'z'.repeat(64), `sha256=${good}`, '']) {
			expect(verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers: { signature }, secret })).toBe(false);
		}
	});

	it('missing header -> refused; header under another name does not count', () => {
		expect(verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers: {}, secret })).toBe(false);
		expect(
			verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers: { 'x-signature': good }, secret }),
		).toBe(false);
	});

	it('reads the configured header name in any letter case', () => {
		const headers = { 'x-clinic-signature': good };
		expect(verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers, headerName: 'X-Clinic-Signature', secret })).toBe(true);
		expect(headerValue({ SIGNATURE: 'v' }, 'signature')).toBe('v');
		expect(headerValue({ signature: ['first', 'second'] }, 'Signature')).toBe('first');
	});

	it('no stored secret -> refused, whatever the header says', () => {
		expect(verifyDelivery({ mode: 'hmacSha256', rawBody: body, headers: { signature: good }, secret: undefined })).toBe(false);
		expect(verifyDelivery({ mode: 'secretEquals', rawBody: body, headers: { signature: '' }, secret: '' })).toBe(false);
	});

	it('"secret equals header" compares the secret itself in constant time', () => {
		expect(verifyDelivery({ mode: 'secretEquals', rawBody: body, headers: { signature: secret }, secret })).toBe(true);
		expect(verifyDelivery({ mode: 'secretEquals', rawBody: body, headers: { signature: good }, secret })).toBe(false);
		expect(verifyDelivery({ mode: 'secretEquals', rawBody: body, headers: { signature: secret.slice(1) }, secret })).toBe(false);
		expect(constantTimeEquals('abc', 'abc')).toBe(true);
		expect(constantTimeEquals('abc', 'abcd')).toBe(false);
	});

	it('"none" accepts anything, even without a secret', () => {
		expect(verifyDelivery({ mode: 'none', rawBody: body, headers: {}, secret: undefined })).toBe(true);
	});
});

describe('deliveryId', () => {
	it('is the same for the same event and bytes, in any process', () => {
		const id = deliveryIdOf('patient:patient-updated', body);
		expect(id).toMatch(/^[0-9a-f]{64}$/);
		expect(deliveryIdOf('patient:patient-updated', Buffer.from(body))).toBe(id);
	});

	it('differs for another event or other bytes', () => {
		const id = deliveryIdOf('patient:patient-updated', body);
		expect(deliveryIdOf('patient:patient-created', body)).not.toBe(id);
		expect(deliveryIdOf('patient:patient-updated', Buffer.from(`${body.toString()} `))).not.toBe(id);
	});
});

describe('what the code says about deliveryId', () => {
	it('never recommends it as the value to dedupe on (distinct events with one payload share it)', () => {
		const source = readFileSync(join(__dirname, '../../nodes/ClinicTrigger/signature.ts'), 'utf8');
		expect(source).not.toMatch(/Remove Duplicates node can use it/);
		expect(source).toMatch(/no value to dedupe on/);
	});
});
