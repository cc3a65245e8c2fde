import { errorText, jsonOf, useSimulator } from './support';

const t = useSimulator();

describe('Prescription Drug > Add to Consultation', () => {
	test('posts every value as a string under consultation_prescription_drug; outputs the record', async () => {
		const result = await t.run({
			resource: 'prescriptionDrug',
			operation: 'addToConsultation',
			consultationId: 1,
			prescriptionDrugId: '310',
			additionalFields: { dose: '1 tableta', frequency: 'cada 8 horas', duration: '7 días', prescription_id: 12, account_id: '' },
		});

		const [drug] = jsonOf(result);
		expect(drug).toMatchObject({ consultation_id: 1, prescription_drug_id: 310, dose: '1 tableta' });
		expect(drug).not.toHaveProperty('consultation_prescription_drug');
		const [request] = t.requests();
		expect(request).toMatchObject({ method: 'POST', path: '/api/v1/consultation_prescription_drugs', tokenPlacement: ['header'] });
		expect(request.body).toEqual({
			consultation_prescription_drug: {
				consultation_id: '1',
				prescription_drug_id: '310',
				dose: '1 tableta',
				frequency: 'cada 8 horas',
				duration: '7 días',
				prescription_id: '12',
			},
		});
	});

	test('ids are checked before any request, naming the field and the item', async () => {
		const drug = await t.run({ resource: 'prescriptionDrug', operation: 'addToConsultation', consultationId: '1', prescriptionDrugId: '3.5' });
		expect(errorText(drug)).toContain('Prescription Drug ID must be a whole number such as 42, but in item 1 it is "3.5"');

		const prescription = await t.run({
			resource: 'prescriptionDrug',
			operation: 'addToConsultation',
			consultationId: '1',
			prescriptionDrugId: '310',
			additionalFields: { prescription_id: 'rx-1' },
		});
		expect(errorText(prescription)).toContain('Prescription ID must be a whole number');
		expect(t.requests()).toEqual([]);
	});

	test('a consultation the service does not know -> its own words', async () => {
		const result = await t.run({ resource: 'prescriptionDrug', operation: 'addToConsultation', consultationId: '77', prescriptionDrugId: '310' });

		expect(result.error?.message).toBe('The clinic service refused the request: consultation must exist');
		expect(errorText(result)).toContain('Consultation 77');
	});
});
