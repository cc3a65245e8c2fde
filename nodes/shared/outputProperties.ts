/** The Output and Fields parameters of the nodes: what a user picks, described in their words. */
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import type { RecordShape } from './output';

/** Shown from version 1.1 on (version 1 keeps its own parameters). */
const FROM_OUTPUT_VERSION = { hide: { '@version': [1] } };

function modeProperty(simpleDescription: string, displayName = 'Output'): INodeProperties {
	return {
		displayName,
		name: 'outputMode',
		type: 'options',
		noDataExpression: true,
		default: 'simple',
		options: [
			{ name: 'Raw', value: 'raw', description: 'The whole record as the service sends it' },
			{
				name: 'Selected Fields',
				value: 'fields',
				description: 'The IDs and the fields you pick: nothing else is kept in n8n\'s execution history',
			},
			{ name: 'Simplified', value: 'simple', description: simpleDescription },
		],
		description:
			'What each output item holds. Every field output is kept in n8n\'s execution history; keep only what the next steps use.',
		displayOptions: FROM_OUTPUT_VERSION,
	};
}

function fieldOptions(fields: readonly string[]): INodePropertyOptions[] {
	return [...fields].sort().map((name) => ({ name, value: name }));
}

/** Output and Fields for an operation whose items are records of `shape`. */
export function recordOutputProperties(shape: RecordShape, displayName?: string): INodeProperties[] {
	return [
		modeProperty(`The ${shape.noun}'s IDs, dates and amounts, without ${shape.leftOut}`, displayName),
		{
			displayName: 'Fields',
			name: 'outputFields',
			type: 'multiOptions',
			options: fieldOptions(shape.fields),
			default: [],
			description: `Fields of the ${shape.noun} to output besides its IDs (the ID and every field whose name ends in _id)`,
			displayOptions: { show: { outputMode: ['fields'] }, ...FROM_OUTPUT_VERSION },
		},
	];
}

/** Output and Fields for events: everything about the event stays, its value is shaped. */
export function eventOutputProperties(): INodeProperties[] {
	return [
		modeProperty(
			"Each event with the IDs of its value (the patient's or consultation's ID, encounter_id, ...), without names, contact details or clinical text",
		),
		{
			displayName: 'Fields',
			name: 'outputFields',
			type: 'string',
			default: '',
			placeholder: 'e.g. email, first_name',
			description:
				"Fields of the event's value to output besides its IDs (the ID and every field whose name ends in _id), separated by commas",
			displayOptions: { show: { outputMode: ['fields'] }, ...FROM_OUTPUT_VERSION },
		},
	];
}
