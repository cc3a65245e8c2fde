/** The Clinic Trigger's panel: credential choice, events from the shared catalog, options. */
import type { INodeProperties } from 'n8n-workflow';

import { integrationAuthenticationOptions } from '../shared/authentication';
import { eventOptions } from '../shared/catalogOptions';
import { DEFAULT_SIGNATURE_HEADER } from '../shared/signature';

export const DEFAULT_DUPLICATE_WINDOW_MINUTES = 60;

export const triggerProperties: INodeProperties[] = [
	{
		// n8n offers no display condition on its own webhook address, so this shows always.
		displayName:
			"The clinic service sends events only to https:// addresses. If the webhook URLs above start with http:// (a local n8n), set n8n's WEBHOOK_URL to a public https:// address, or for a local test turn on Options > Allow Insecure URL.",
		name: 'httpsNotice',
		type: 'notice',
		default: '',
		displayOptions: { hide: { '/options.allowInsecureUrl': [true] } },
	},
	{
		displayName: 'Authentication',
		name: 'authentication',
		type: 'options',
		options: integrationAuthenticationOptions,
		default: 'clinicApi',
	},
	{
		displayName: 'Events',
		name: 'events',
		type: 'multiOptions',
		options: eventOptions,
		default: [],
		required: true,
		description:
			"Events to receive. Each one becomes its own subscription on the clinic's webhook service while the workflow is active; the topic sent is the credential's Topic Prefix, a dot and the topic shown.",
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Allow Insecure URL',
				name: 'allowInsecureUrl',
				type: 'boolean',
				default: false,
				description:
					"Whether to register an http:// callback address. Only for local tests (for example with the clinic simulator): the real service accepts HTTPS addresses only, so set n8n's WEBHOOK_URL to a public https:// address instead.",
			},
			{
				displayName: 'Ignore Repeats For (Minutes)',
				name: 'duplicateWindowMinutes',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: DEFAULT_DUPLICATE_WINDOW_MINUTES,
				description:
					'A delivery with exactly the same body for the same subscription within this many minutes of an accepted one is answered but starts no execution (the service may send a delivery more than once). 0 turns this off. This memory is per n8n process: with several processes, add a Remove Duplicates node on the deliveryId field.',
			},
			{
				displayName: 'Include Raw Body',
				name: 'includeRawBody',
				type: 'boolean',
				default: false,
				description: 'Whether to add the body exactly as received, as text, in the rawBody field',
			},
			{
				displayName: 'Max Body Size (KiB)',
				name: 'maxBodySizeKb',
				type: 'number',
				typeOptions: { minValue: 1 },
				// KiB; the same 1 MiB as DEFAULT_MAX_BODY_BYTES in ../shared/deliveries (the lint wants a literal).
				default: 1024,
				description: 'Larger deliveries are refused (400) and start no execution',
			},
			{
				displayName: 'Signature Header',
				name: 'signatureHeader',
				type: 'string',
				default: DEFAULT_SIGNATURE_HEADER,
				description: 'Name of the request header that carries the signature or secret; any letter case matches',
			},
			{
				displayName: 'Verification',
				name: 'verification',
				type: 'options',
				options: [
					{
						name: 'HMAC-SHA256 Signature',
						value: 'hmacSha256',
						description:
							"The header holds the hex HMAC-SHA256 of the raw body keyed with the subscription's secret (what the service sends)",
					},
					{
						name: 'Header Equals Secret',
						value: 'secretEquals',
						description: "The header holds the subscription's secret itself",
					},
					{
						name: 'None (Insecure)',
						value: 'none',
						description:
							'Warning: anyone who learns the webhook address can start this workflow with made-up data. Use only for tests.',
					},
				],
				default: 'hmacSha256',
				description:
					'How each delivery proves it comes from the clinic service. A delivery that fails the check is answered 401 and starts no execution.',
			},
		],
	},
];
