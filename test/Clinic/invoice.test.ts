import { cfdiUuid, fileNameFromDisposition } from '../../nodes/Clinic/actions/invoice/cfdiDownload';
import { SecretCollector, findLeaks } from '../helpers';
import { bytesOf, errorText, itemsOf, jsonOf, useSimulator } from './support';

const t = useSimulator();

describe('Invoice > Get by Encounter', () => {
	test('outputs the unwrapped invoice', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'getByEncounter', encounterId: '1' });

		expect(jsonOf(result)).toEqual([expect.objectContaining({ id: 1, encounter_id: 1, signed_at: null })]);
		expect(t.requests()[0]).toMatchObject({ method: 'GET', path: '/api/v1/encounters/1/invoice', tokenPlacement: ['header'] });
	});

	test('an encounter without invoice -> the 404 names the encounter', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'getByEncounter', encounterId: '4' });

		expect(result.error?.message).toBe('The invoice of encounter 4 was not found');
	});
});

describe('Invoice > Sign', () => {
	test('posts without a body and outputs the signed invoice', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'sign', invoiceId: '1' });

		expect(jsonOf(result)[0]).toMatchObject({ id: 1, signed_at: expect.any(String), tax_attributes: { use_cfdi: expect.any(String) } });
		expect(t.requests()[0]).toMatchObject({ method: 'POST', path: '/api/v1/invoices/1/sign', body: null, tokenPlacement: ['header'] });
	});

	test('an invoice signed before -> says so plainly and points to Get by Encounter', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'sign', invoiceId: '3' });

		expect(result.error?.message).toBe('Invoice 3 is already signed: its CFDI was stamped before, so it cannot be signed again');
		expect(errorText(result)).toContain('Get by Encounter');
		expect((result.error as { httpCode?: string }).httpCode).toBe('422');
	});

	test('other refusals keep the service\'s words', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'sign', invoiceId: '2' });

		expect(result.error?.message).toBe('The clinic service refused the request: Invoice has no charges to sign');
		// Words a model calling the node as a tool can act on too: what to do next, not n8n's items.
		expect((result.error as { description?: string }).description).toBe(
			'Invoice 2 was refused for the reason above. Do what it asks, or correct the value sent, then try again.',
		);
	});
});

describe('Invoice > Email', () => {
	test('e-mails a signed invoice and outputs it', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'email', invoiceId: '3' });

		expect(jsonOf(result)[0]).toMatchObject({ id: 3 });
		// Version 1 outputs the service's invoice exactly as before: no email_sent.
		expect(jsonOf(result)[0]).not.toHaveProperty('email_sent');
		expect(t.requests()[0]).toMatchObject({ method: 'POST', path: '/api/v1/invoices/3/email_invoice', body: null });
		expect(t.sim.data.invoiceEmails).toHaveLength(1);
	});

	test('an unsigned invoice -> the service says to sign it first', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'email', invoiceId: '1' });

		expect(result.error?.message).toContain('sign it before e-mailing it');
	});
});

describe('Invoice > Download PDF / XML', () => {
	test('PDF: binary in "data" with the file name and MIME type; the token travels only in the query', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'downloadPdf', invoiceId: '3' });

		const [item] = itemsOf(result);
		expect(item.json).toEqual({ invoiceId: 3, fileName: '3.pdf' });
		expect(item.binary?.data).toMatchObject({ fileName: '3.pdf', mimeType: 'application/pdf', fileExtension: 'pdf' });
		expect((await bytesOf(item.binary!.data)).subarray(0, 5).toString()).toBe('%PDF-');
		expect(t.requests()[0]).toMatchObject({
			method: 'GET',
			path: '/api/v1/invoices/3/download_cfdi.pdf',
			query: { token: '<token>' },
			tokenPlacement: ['query'],
			tokenKind: 'integration',
		});
	});

	test('XML: binary in the chosen field, MIME application/xml although the service sends no type, and the CFDI UUID', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'downloadXml', invoiceId: '3', binaryPropertyName: 'cfdi' });

		const [item] = itemsOf(result);
		expect(item.json).toEqual({ invoiceId: 3, uuid: '5FB2822E-396D-4725-8521-CDC4BDD20CCF', fileName: '3.xml' });
		expect(Object.keys(item.binary ?? {})).toEqual(['cfdi']);
		expect(item.binary?.cfdi).toMatchObject({ fileName: '3.xml', mimeType: 'application/xml' });
		expect((await bytesOf(item.binary!.cfdi)).toString('utf8')).toContain('<tfd:TimbreFiscalDigital');
	});

	test('XML without "Extract CFDI UUID" -> no uuid in the JSON', async () => {
		const result = await t.run({ resource: 'invoice', operation: 'downloadXml', invoiceId: '3', extractUuid: false });

		expect(jsonOf(result)).toEqual([{ invoiceId: 3, fileName: '3.xml' }]);
	});

	test('the token-bearing URL appears neither in output nor in errors', async () => {
		const ok = await t.run({ resource: 'invoice', operation: 'downloadXml', invoiceId: '3' });
		const refused = await t.run({ resource: 'invoice', operation: 'downloadPdf', invoiceId: '1' });
		const missing = await t.run({ resource: 'invoice', operation: 'downloadPdf', invoiceId: '404' });

		expect(refused.error?.message).toBe('The clinic service refused the request: Invoice is not signed; it has no CFDI yet');
		expect(missing.error?.message).toBe('Invoice 404 was not found');
		const secrets = new SecretCollector().addFromStore(ok.store).addFromStore(refused.store).addFromStore(missing.store).list();
		expect(secrets.length).toBeGreaterThan(0);
		expect(findLeaks(secrets, ok.output, refused.error, missing.error)).toEqual([]);
		for (const text of [JSON.stringify(ok.output), errorText(refused), errorText(missing)]) {
			expect(text).not.toContain('download_cfdi');
			expect(text).not.toContain('token=');
		}
	});

	test('continue on fail: each invoice gets its file or its error, paired to its input', async () => {
		const ids = t.sim.seedInvoices(2);
		const result = await t.run(
			{ resource: 'invoice', operation: 'downloadPdf', invoiceId: '={{ $json.id }}' },
			{ items: [{ json: { id: ids[0] } }, { json: { id: 1 } }, { json: { id: ids[1] } }], continueOnFail: true },
		);

		const output = itemsOf(result);
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(output[0].binary?.data.fileName).toBe(`${ids[0]}.pdf`);
		expect(output[1].json.error).toContain('no CFDI yet');
		expect(output[1].binary).toBeUndefined();
		expect(output[2].binary?.data.fileName).toBe(`${ids[1]}.pdf`);
	});
});

describe('CFDI helpers', () => {
	test('file name from Content-Disposition, extended form first, never with a path', () => {
		expect(fileNameFromDisposition('attachment; filename="42.xml"')).toBe('42.xml');
		expect(fileNameFromDisposition('attachment; filename=42.pdf')).toBe('42.pdf');
		expect(fileNameFromDisposition(`attachment; filename="f.pdf"; filename*=UTF-8''factura%20A%C3%B1o.pdf`)).toBe('factura Año.pdf');
		expect(fileNameFromDisposition('attachment; filename="../../etc/passwd"')).toBe('passwd');
		expect(fileNameFromDisposition('attachment; filename=".."')).toBeUndefined();
		expect(fileNameFromDisposition('attachment')).toBeUndefined();
		expect(fileNameFromDisposition(undefined)).toBeUndefined();
	});

	test('UUID of the TimbreFiscalDigital, whatever the prefix, quotes or attribute order', () => {
		const uuid = '5FB2822E-396D-4725-8521-CDC4BDD20CCF';
		expect(cfdiUuid(`<cfdi:Complemento><tfd:TimbreFiscalDigital Version="1.1" UUID="${uuid}"/></cfdi:Complemento>`)).toBe(uuid);
		expect(cfdiUuid(`<x:TimbreFiscalDigital\n  SelloSAT='a>b'\n  UUID='${uuid}' />`)).toBe(uuid);
		expect(cfdiUuid(`<tfd:TimbreFiscalDigitalX UUID="nope"/><TimbreFiscalDigital UUID="${uuid}"></TimbreFiscalDigital>`)).toBe(uuid);
		expect(cfdiUuid('<cfdi:Comprobante UUID="not-the-stamp"/>')).toBeUndefined();
		expect(cfdiUuid('<tfd:TimbreFiscalDigital Version="1.1"/>')).toBeUndefined();
	});
});
