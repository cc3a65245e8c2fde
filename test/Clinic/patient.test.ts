import { errorItemIndex, errorText, jsonOf, useSimulator } from './support';

const t = useSimulator();

describe('Patient > Update', () => {
	test('sends only the fields set, wrapped in person, dates as YYYY-MM-DD; outputs the unwrapped person', async () => {
		const result = await t.run({
			resource: 'patient',
			operation: 'update',
			patientId: '1',
			additionalFields: {
				first_name: 'María',
				born_at: '1988-04-13T00:00:00',
				email: 'maria@example.mx',
				phone_country_id: '52',
				person_attributes: {
					send_reminders: false,
					insurance_taxed: true,
					insurance_claim_folio: 'F-1',
					insurance_claim_sinister_date: '2025-01-02T00:00:00',
				},
			},
		});

		const [person] = jsonOf(result);
		expect(person).toMatchObject({ id: 1, first_name: 'María', born_at: '1988-04-13', email: 'maria@example.mx' });
		expect(person).not.toHaveProperty('person');
		const [request] = t.requests();
		expect(request).toMatchObject({ method: 'PUT', path: '/api/v1/people/1', tokenPlacement: ['header'], tokenKind: 'integration' });
		expect(request.body).toEqual({
			person: {
				first_name: 'María',
				born_at: '1988-04-13',
				email: 'maria@example.mx',
				phone_country_id: '52',
				person_attributes: {
					send_reminders: false,
					insurance_taxed: true,
					insurance_claim_folio: 'F-1',
					insurance_claim_sinister_date: '2025-01-02',
				},
			},
		});
		expect(t.sim.data.people.get(1)?.person_attributes).toMatchObject({ insurance_name: 'GNP Seguros', insurance_taxed: true });
	});

	test('fields left empty are not sent', async () => {
		const result = await t.run({
			resource: 'patient',
			operation: 'update',
			patientId: '3',
			additionalFields: { last_name: 'Ramírez', telephone2: '', gender: '={{ $json.missing }}' },
		});

		expect(jsonOf(result)[0]).toMatchObject({ id: 3, last_name: 'Ramírez' });
		expect(t.requests()[0].body).toEqual({ person: { last_name: 'Ramírez' } });
	});

	test('nothing to update -> stops before any request and says to add a field', async () => {
		const result = await t.run({ resource: 'patient', operation: 'update', patientId: '1', additionalFields: { email: '' } });

		expect(errorText(result)).toMatch(/Nothing to update for patient 1 in item 1.*Update Fields/);
		expect(t.requests()).toEqual([]);
	});

	test('a bad e-mail, date or id fails before any request, naming the field and the item', async () => {
		const items = [{ json: { id: 1, email: 'ok@example.mx' } }, { json: { id: 2, email: 'not-an-email' } }];
		const badEmail = await t.run(
			{ resource: 'patient', operation: 'update', patientId: '={{ $json.id }}', additionalFields: { email: '={{ $json.email }}' } },
			{ items },
		);
		expect(errorText(badEmail)).toContain('Email must be an e-mail address, but in item 2 it is "not-an-email"');
		expect(errorItemIndex(badEmail)).toBe(1);
		// Item 1 went through; item 2 never reached the service.
		expect(t.requests().map((r) => r.path)).toEqual(['/api/v1/people/1']);

		const badDate = await t.run({
			resource: 'patient',
			operation: 'update',
			patientId: '1',
			additionalFields: { person_attributes: { insurance_claim_issue_date: '2025-02-30' } },
		});
		expect(errorText(badDate)).toContain('Insurance Claim Issue Date must be a date (YYYY-MM-DD), but in item 1 it is "2025-02-30"');

		const badId = await t.run({ resource: 'patient', operation: 'update', patientId: 'abc', additionalFields: { first_name: 'X' } });
		expect(errorText(badId)).toContain('Patient ID must be a whole number such as 42, but in item 1 it is "abc"');

		const badAccount = await t.run({ resource: 'patient', operation: 'update', patientId: '1', additionalFields: { account_id: '12a' } });
		expect(errorText(badAccount)).toContain('Account ID must be a whole number');
		expect(t.requests()).toHaveLength(1);
	});

	test('unknown patient -> the 404 names the patient', async () => {
		const result = await t.run({ resource: 'patient', operation: 'update', patientId: '999', additionalFields: { first_name: 'X' } });

		expect(result.error?.message).toBe('Patient 999 was not found');
		expect((result.error as { httpCode?: string }).httpCode).toBe('404');
	});

	test('the service refusing a value -> its own words', async () => {
		const result = await t.run({ resource: 'patient', operation: 'update', patientId: '1', additionalFields: { born_at: '2999-01-01' } });

		expect(result.error?.message).toBe('The clinic service refused the request: born_at is invalid');
	});

	test('continue on fail: a failed item becomes an error item paired to its input, the others go on', async () => {
		const items = [{ json: { id: '1' } }, { json: { id: 'x' } }, { json: { id: '999' } }, { json: { id: '2' } }];
		const result = await t.run(
			{ resource: 'patient', operation: 'update', patientId: '={{ $json.id }}', additionalFields: { gender: 'female' } },
			{ items, continueOnFail: true },
		);

		const output = result.output?.[0] ?? [];
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }, { item: 3 }]);
		expect(output[0].json).toMatchObject({ id: 1, gender: 'female' });
		expect(output[1].json.error).toContain('Patient ID must be a whole number');
		expect(output[2].json).toMatchObject({ error: 'Patient 999 was not found', httpCode: '404' });
		expect(output[3].json).toMatchObject({ id: 2, gender: 'female' });
	});
});

describe('Patient > Get Custom Form Response', () => {
	test('one item per response', async () => {
		const result = await t.run({ resource: 'patient', operation: 'getCustomFormResponse', patientId: '1' });

		expect(jsonOf(result).map((response) => response.id)).toEqual([71, 72]);
		expect(t.requests()[0]).toMatchObject({ method: 'GET', path: '/api/v1/people/1/custom_form_response', tokenPlacement: ['header'] });
	});

	test('every input item gets its own responses, paired to it', async () => {
		const result = await t.run(
			{ resource: 'patient', operation: 'getCustomFormResponse', patientId: '={{ $json.id }}' },
			{ items: [{ json: { id: 2 } }, { json: { id: 1 } }] },
		);

		const output = result.output?.[0] ?? [];
		expect(output.map((item) => [item.json.id, item.pairedItem])).toEqual([
			[73, { item: 0 }],
			[71, { item: 1 }],
			[72, { item: 1 }],
		]);
	});
});
