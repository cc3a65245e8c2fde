import { sameUrl } from '../../nodes/shared/urls';

describe('sameUrl: addresses a service may store normalised', () => {
	const ours = 'https://n8n.example.com/webhook/abc/webhook?event=patient%3Apatient-updated&x=1';

	it('the same address, a trailing slash, the query in another order, the host in capitals: the same', () => {
		expect(sameUrl(ours, ours)).toBe(true);
		expect(sameUrl(ours, 'https://n8n.example.com/webhook/abc/webhook/?event=patient%3Apatient-updated&x=1')).toBe(true);
		expect(sameUrl(ours, 'https://n8n.example.com/webhook/abc/webhook?x=1&event=patient%3Apatient-updated')).toBe(true);
		expect(sameUrl(ours, 'https://N8N.example.com/webhook/abc/webhook?event=patient:patient-updated&x=1')).toBe(true);
	});

	it('another path, event or host: not the same', () => {
		expect(sameUrl(ours, 'https://n8n.example.com/webhook/abd/webhook?event=patient%3Apatient-updated&x=1')).toBe(false);
		expect(sameUrl(ours, 'https://n8n.example.com/webhook/abc/webhook?event=patient%3Apatient-created&x=1')).toBe(false);
		expect(sameUrl(ours, 'https://other.example.com/webhook/abc/webhook?event=patient%3Apatient-updated&x=1')).toBe(false);
		expect(sameUrl('not a url', 'not a url')).toBe(true);
		expect(sameUrl('not a url', ours)).toBe(false);
	});
});
