/** The Clinic Event Log Trigger's panel: credential, events from the shared catalog, where to start, options. */
import type { INodeProperties } from 'n8n-workflow';

import { integrationAuthenticationProperty } from '../shared/authentication';
import { eventsProperty } from '../shared/catalogOptions';
import { timeoutOption } from '../shared/timeoutOption';

export const DEFAULT_MAX_EVENTS_PER_POLL = 1000;
export const MAX_EVENTS_PER_POLL_LIMIT = 10000;

export const eventLogTriggerProperties: INodeProperties[] = [
	integrationAuthenticationProperty,
	eventsProperty(
		"Events to start the workflow with. They are read from the service's event log; the topic is the credential's Topic Prefix, a dot and the topic shown.",
	),
	{
		displayName: 'Start From',
		name: 'startFrom',
		type: 'options',
		default: 'now',
		options: [
			{
				name: 'Now',
				value: 'now',
				description: 'Only events that happen after the workflow is first activated',
			},
			{
				name: 'A Date',
				value: 'date',
				description: 'Also the events created since a date (a backfill on purpose)',
			},
			{
				name: 'An Event ID',
				value: 'eventId',
				description: 'Also the events from an event ID on, that one included',
			},
		],
		description:
			'Where the trigger starts reading on its first activation. Later it carries on where it stopped, also after a restart; changing this setting starts again from the new place.',
	},
	{
		displayName: 'Start Date',
		name: 'startDate',
		type: 'dateTime',
		default: '',
		required: true,
		displayOptions: { show: { startFrom: ['date'] } },
		description: 'Events created at or after this moment are emitted, oldest first',
	},
	{
		displayName: 'Start Event ID',
		name: 'startEventId',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 1,
		displayOptions: { show: { startFrom: ['eventId'] } },
		description: 'The ID of the first event to emit (the eventId field of an earlier run)',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Include Delivery Logs',
				name: 'includeDeliveryLogs',
				type: 'boolean',
				default: false,
				description:
					"Whether to add the event's webhook delivery attempts in the logs field (their shared secrets are left out)",
			},
			{
				displayName: 'Max Events Per Poll',
				name: 'maxEventsPerPoll',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: MAX_EVENTS_PER_POLL_LIMIT },
				default: DEFAULT_MAX_EVENTS_PER_POLL,
				description:
					'The most events one execution starts with. After a long downtime the oldest come first and the rest follow at the next polls.',
			},
			timeoutOption(
				'How long to wait for each answer of the event log. A poll that times out starts nothing and the next poll picks up the same events.',
			),
		],
	},
];
