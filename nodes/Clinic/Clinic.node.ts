import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { nodeAuthenticationOptions } from '../shared/authentication';
import { MAX_PARALLEL_REQUESTS, router } from './actions/router';
import { operationSubtitle, resourceOptions, resources } from './actions/resources';
import { searchSubscriptions } from './listSearch';

export class Clinic implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Clinic',
		name: 'clinic',
		icon: { light: 'file:clinic.svg', dark: 'file:clinic.dark.svg' },
		group: ['transform'],
		version: 1,
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
				displayOptions: { show: { resource: ['patientPortal'], operation: ['getPeople'], tokenSource: ['credential'] } },
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
				displayOptions: { show: { authentication: ['none'] } },
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
						displayName: 'Parallel Requests',
						name: 'parallelRequests',
						type: 'number',
						typeOptions: { minValue: 1, maxValue: MAX_PARALLEL_REQUESTS },
						default: 1,
						description:
							'How many items may be in conversation with the service at the same time (1: one item after the other). Output order and pairing stay the same. Raise it for large batches or a slow connection; if the service answers "too many requests", the node waits as long as it asks.',
					},
				],
			},
		],
	};

	methods = {
		listSearch: { searchSubscriptions },
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
