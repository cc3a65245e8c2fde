import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { nodeAuthenticationOptions } from '../shared/authentication';
import { timeoutOption } from '../shared/timeoutOption';
import { router } from './actions/router';
import { MAX_PARALLEL_REQUESTS } from './actions/scheduler';
import { operationSubtitle, resourceOptions, resources } from './actions/resources';
import { searchSubscriptions } from './listSearch';

export class Clinic implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Clinic',
		name: 'clinic',
		icon: { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' },
		group: ['transform'],
		// 1.1: the Output choice (Simplified by default); saved version 1 nodes output as before.
		// 1.2: Get People's token source is its Authentication (Portal Token From before).
		version: [1, 1.1, 1.2],
		defaultVersion: 1.2,
		subtitle: operationSubtitle(),
		description:
			'Patients, consultations, prescriptions, charges, CFDI invoices, billing reports, telehealth waiting rooms and webhook events of your clinic-management service',
		defaults: { name: 'Clinic' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'clinicApi',
				required: true,
				displayOptions: { show: { authentication: ['clinicApi'] }, hide: { operation: ['getPeople'] } },
			},
			{
				name: 'clinicRefreshTokenApi',
				required: true,
				displayOptions: { show: { authentication: ['clinicRefreshTokenApi'] }, hide: { operation: ['getPeople'] } },
			},
			{
				name: 'clinicPatientPortalApi',
				required: true,
				// Shown by Authentication, as the others (Get People's own, shared/authentication.ts).
				displayOptions: { show: { authentication: ['clinicPatientPortalApi'], tokenSource: ['credential'] } },
			},
		],
		properties: [
			{
				displayName: 'Authentication',
				name: 'authentication',
				type: 'options',
				options: nodeAuthenticationOptions,
				default: 'clinicApi',
				// Only Patient Portal has Get People, and it signs with the portal token alone.
				displayOptions: { hide: { operation: ['getPeople'] } },
			},
			{
				displayName: 'API Base URL',
				name: 'baseUrl',
				type: 'string',
				default: '',
				required: true,
				placeholder: 'https://api.your-clinic-service.com/api/v1',
				description: 'Address of the clinic API, used when no credential is selected',
				displayOptions: { show: { authentication: ['none'] }, hide: { operation: ['getPeople'] } },
			},
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: resourceOptions,
				default: 'invoice',
			},
			...Object.values(resources).flatMap((resource) => resource.description),
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add option',
				default: {},
				options: [
					{
						displayName: 'Maximum Parallel Requests',
						name: 'maxParallelRequests',
						type: 'number',
						typeOptions: { minValue: 1, maxValue: MAX_PARALLEL_REQUESTS },
						default: MAX_PARALLEL_REQUESTS,
						description:
							'With Parallel Requests Automatic: the most requests in flight to the service at once, counting every workflow running in this n8n process',
						displayOptions: { hide: { parallelism: ['fixed'] } },
					},
					{
						displayName: 'Number of Parallel Requests',
						name: 'parallelRequests',
						type: 'number',
						typeOptions: { minValue: 1, maxValue: MAX_PARALLEL_REQUESTS },
						default: 1,
						description:
							'With Parallel Requests Fixed Number: how many items may be in conversation with the service at the same time (1: one item after the other), for every operation',
						displayOptions: { hide: { parallelism: ['automatic'] } },
					},
					{
						displayName: 'Parallel Requests',
						name: 'parallelism',
						type: 'options',
						options: [
							{
								name: 'Automatic',
								value: 'automatic',
								description:
									'Start with a few requests at once, send more while the service answers well, and fewer (waiting as long as it asks) when it says it is busy. Writes that must not overlap go one at a time.',
							},
							{
								name: 'Fixed Number',
								value: 'fixed',
								description: 'Always the number you set, for every operation (1: one item after the other)',
							},
						],
						default: 'automatic',
						description: 'How many items talk to the service at once. Output order and pairing stay the same either way.',
					},
					timeoutOption(
						'How long to wait for each answer of the service before the item fails. A change (sign, e-mail, update) that times out is not sent again.',
					),
				],
			},
		],
	};

	methods = {
		listSearch: { searchSubscriptions },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		// With Continue On Fail, a failed item becomes an error item paired to its input.
		return await router.call(this, { continueOnFail: this.continueOnFail() });
	}
}
