/** The Clinic Trigger's panel: credential choice, events from the shared catalog, options. */
import type { INodeProperties } from 'n8n-workflow';

import { integrationAuthenticationProperty } from '../shared/authentication';
import { eventsProperty } from '../shared/catalogOptions';
import { DEFAULT_SIGNATURE_HEADER } from './signature';

export const triggerProperties: INodeProperties[] = [
	{
		// n8n offers no display condition on its own webhook address, so this shows always.
		displayName: "The clinic service sends events only to public https:// addresses. If the webhook URLs above start with http:// (an n8n without a public address), use the Clinic Event Log Trigger instead: it fetches new events from the service and needs no public address. Otherwise set n8n's WEBHOOK_URL to your public https:// address; for a local test only, turn on Options > Allow Insecure URL.",
		name: 'httpsNotice', type: 'notice', default: '', displayOptions: { hide: { '/options.allowInsecureUrl': [true] } },
	},
	integrationAuthenticationProperty,
	eventsProperty(
		"Events to receive. Each one becomes its own subscription on the clinic's webhook service while the workflow is active; the topic sent is the credential's Topic Prefix, a dot and the topic shown.",
	),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{ displayName: 'Allow Insecure URL', name: 'allowInsecureUrl', type: 'boolean', default: false, description: "Whether to register an http:// callback address. Only for local tests (for example with the clinic simulator): the real service accepts HTTPS addresses only, so set n8n's WEBHOOK_URL to a public https:// address instead." },
			{
				displayName: 'Duplicate Check',
				name: 'duplicateCheck',
				type: 'options',
				default: 'eventLog',
				options: [
					{ name: 'Event Log (by Event ID)', value: 'eventLog', description: "Each delivery makes the trigger read the service's event log and run every event logged since its last run, each with its eventId: also those sent while n8n was down. Copies and re-sends start nothing." },
					{ name: "Off: Run Each Delivery's Body", value: 'off', description: "For accounts that cannot read the event log: every verified delivery runs with its own body and no eventId, so the service's copies and re-sends run again" },
				],
				description: 'The service may deliver an event more than once, and its body may carry only an identifier',
			},
			{ displayName: 'Include Raw Body', name: 'includeRawBody', type: 'boolean', default: false, description: 'Whether to add the body exactly as received, as text, in the rawBody field. Only with Duplicate Check Off: otherwise each item is an event from the log.' },
			// KiB; the same 1 MiB as DEFAULT_MAX_BODY_BYTES in receive.ts (the lint wants a literal).
			{ displayName: 'Max Body Size (KiB)', name: 'maxBodySizeKb', type: 'number', typeOptions: { minValue: 1 }, default: 1024, description: 'Larger deliveries are refused (400) and start no execution' },
			{ displayName: 'Signature Header', name: 'signatureHeader', type: 'string', default: DEFAULT_SIGNATURE_HEADER, description: 'Name of the request header that carries the signature or secret; any letter case matches' },
			{
				displayName: 'Verification',
				name: 'verification',
				type: 'options',
				options: [
					{ name: 'HMAC-SHA256 Signature', value: 'hmacSha256', description: "The header holds the hex HMAC-SHA256 of the raw body keyed with the subscription's secret (what the service sends)" },
					{ name: 'Header Equals Secret', value: 'secretEquals', description: "The header holds the subscription's secret itself" },
					{ name: 'None (Insecure)', value: 'none', description: 'Warning: anyone who learns the webhook address can start this workflow with made-up data. Use only for tests.' },
				],
				default: 'hmacSha256',
				description:
					'How each delivery proves it comes from the clinic service. A delivery that fails the check is answered 401 and starts no execution.',
			},
		],
	},
];
