/** Every resource of the node: the names users see and the service's wire names are mapped inside each folder. */
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import * as billingReport from './billingReport';
import * as charge from './charge';
import * as consultation from './consultation';
import * as event from './event';
import * as invoice from './invoice';
import * as invoiceItemLocation from './invoiceItemLocation';
import * as patient from './patient';
import * as patientPortal from './patientPortal';
import * as prescriptionDrug from './prescriptionDrug';
import * as state from './state';
import * as waitingRoom from './waitingRoom';
import * as webhookSubscription from './webhookSubscription';

export const resources = {
	patient,
	consultation,
	prescriptionDrug,
	charge,
	invoice,
	billingReport,
	invoiceItemLocation,
	waitingRoom,
	state,
	webhookSubscription,
	event,
	patientPortal,
};

export const resourceOptions: INodePropertyOptions[] = [
	{ name: 'Billing Report', value: 'billingReport', description: 'Charges and invoice totals per encounter between two dates' },
	{ name: 'Charge', value: 'charge', description: 'A line (invoice item) on a consultation invoice' },
	{ name: 'Consultation', value: 'consultation', description: 'A visit with a doctor: its cause, times and the invoice it leads to' },
	{ name: 'Event', value: 'event', description: 'Events the webhook service emitted, with delivery logs' },
	{ name: 'Invoice', value: 'invoice', description: 'Invoices and their CFDI electronic invoice' },
	{ name: 'Invoice Item Location', value: 'invoiceItemLocation', description: 'Where a charge is made, e.g. the pharmacy or the laboratory' },
	{ name: 'Patient', value: 'patient', description: 'A patient\'s details and answers to the clinic\'s forms' },
	{ name: 'Patient Portal', value: 'patientPortal', description: 'Phone verification and the portal token' },
	{ name: 'Prescription Drug', value: 'prescriptionDrug', description: 'A drug of the clinic\'s catalog, prescribed in a consultation' },
	{ name: 'State', value: 'state', description: 'Geography: states by ID' },
	{ name: 'Waiting Room', value: 'waitingRoom', description: 'Telehealth waiting rooms' },
	{ name: 'Webhook Subscription', value: 'webhookSubscription', description: 'Which events the webhook service sends to which address' },
];

/** "Invoice → Sign (Stamp CFDI)": the names users see, for messages. */
export function operationTitle(resource: string, operation: string): string {
	const option = resourceOptions.find((candidate) => candidate.value === resource);
	const module = (resources as Record<string, { description: INodeProperties[] }>)[resource];
	const operations = module?.description.find((property) => property.name === 'operation')?.options as INodePropertyOptions[] | undefined;
	return `${option?.name ?? resource} → ${operations?.find((candidate) => candidate.value === operation)?.name ?? operation}`;
}

/**
 * The canvas subtitle, "Invoice: Get by Encounter", as an expression: subtitles cannot call
 * node code, so the names are written into it.
 */
export function operationSubtitle(): string {
	const names: Record<string, string> = {};
	for (const resource of resourceOptions) {
		const module = (resources as Record<string, { description: INodeProperties[] }>)[String(resource.value)];
		const operation = module.description.find((property) => property.name === 'operation');
		for (const option of (operation?.options ?? []) as INodePropertyOptions[]) {
			names[`${String(resource.value)}.${String(option.value)}`] = `${resource.name}: ${option.name}`;
		}
	}
	return `={{ (${JSON.stringify(names)})[$parameter["resource"] + "." + $parameter["operation"]] || $parameter["operation"] }}`;
}
