/**
 * The operations that change something at the service, and how "Parallel Requests:
 * Automatic" sends them (the README's table says the same): `parallel` when each item
 * changes a record of its own; `oneAtATime`, in input order, when the order matters, two
 * items may change the same record, or the change cannot be undone. Others only read.
 */
export type WriteMode = 'parallel' | 'oneAtATime';

export const WRITES: Record<string, Record<string, WriteMode>> = {
	// Lines often go onto the same invoice or consultation: in input order, and never two
	// at once racing over the same totals.
	charge: { addToInvoice: 'oneAtATime' },
	prescriptionDrug: { addToConsultation: 'oneAtATime' },
	invoice: {
		// Each item e-mails its own invoice; a repeat only sends the e-mail again.
		email: 'parallel',
		// Stamping a CFDI cannot be undone: one at a time, so that a request that times out
		// leaves at most one invoice whose outcome is unknown, and fiscal folios follow input order.
		sign: 'oneAtATime',
	},
	// Two items may update the same patient: the last input item must be the last change.
	patient: { update: 'oneAtATime' },
	// Few items, and a subscription created twice at once would be delivered twice.
	webhookSubscription: { create: 'oneAtATime', delete: 'oneAtATime' },
	// Text messages to patients, and a code that works once.
	patientPortal: { sendCode: 'oneAtATime', verifyCode: 'oneAtATime' },
};

export function writeMode(resource: string, operation: string): WriteMode | undefined {
	return WRITES[resource]?.[operation];
}
