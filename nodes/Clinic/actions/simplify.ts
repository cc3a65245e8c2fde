/**
 * "Simplify" for bulky records. Saved workflows from before the option get the whole
 * record as before (off by default in the node); as an AI agent's tool the node starts
 * simplified, since every byte of output goes back to the model. Node version 1 only: from
 * 1.1 the Output choice (../../shared/output.ts) takes its place.
 */
import type { IDataObject, INodeProperties } from 'n8n-workflow';

export function simplifyProperties(whatGoes: string): INodeProperties[] {
	return [
		{
			displayName: 'Simplify',
			name: 'simplify',
			type: 'boolean',
			default: false,
			description: `Whether to return a simplified version of the response instead of the raw data (${whatGoes})`,
			displayOptions: { show: { '@tool': [false], '@version': [1] } },
		},
		{
			displayName: 'Simplify',
			name: 'simplify',
			type: 'boolean',
			default: true,
			description: `Whether to return a simplified version of the response instead of the raw data (${whatGoes})`,
			displayOptions: { show: { '@tool': [true], '@version': [1] } },
		},
	];
}

/** A record without its empty (null) fields. */
function withoutNulls(record: IDataObject): IDataObject {
	return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined));
}

/** The id at the end of a link such as `…/people/2048`, or undefined. */
export function idFromLink(link: unknown, segment: string): number | undefined {
	const match = new RegExp(`/${segment}/([1-9][0-9]*)(?:[/?#]|$)`).exec(String(link ?? ''));
	return match ? Number(match[1]) : undefined;
}

/** A consultation without its 19 links and empty fields; the patient's id stays as person_id. */
export function simplifyConsultation(consultation: IDataObject): IDataObject {
	const { links, ...rest } = consultation;
	const personId = idFromLink((links as IDataObject | undefined)?.person, 'people');
	return withoutNulls({ ...rest, ...(personId ? { person_id: personId } : {}) });
}

/** An event without its delivery logs: how many there were and the last answer stay. */
export function simplifyEvent(event: IDataObject): IDataObject {
	const { logs, value, id, topic, name, created_at, tries_left } = event;
	const list = Array.isArray(logs) ? (logs as IDataObject[]) : [];
	const last = list[list.length - 1];
	return withoutNulls({
		id,
		topic,
		name,
		created_at,
		value,
		tries_left,
		deliveries: list.length,
		last_response_code: last ? (last.response_code ?? null) : undefined,
	});
}
