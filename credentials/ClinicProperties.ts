import type { ICredentialTestRequest, INodeProperties } from 'n8n-workflow';

import { DEFAULT_CFDI_QUERY_PARAMETER } from './ClinicTokenPlacement';

/** The main API address, in every credential (and, for public operations, in the node). */
export const apiBaseUrlProperty: INodeProperties = {
	displayName: 'API Base URL',
	name: 'baseUrl',
	type: 'string',
	default: '',
	required: true,
	placeholder: 'https://api.your-clinic-service.com/api/v1',
	description:
		'The API address your clinic service gave you with the integration account (its support can tell you). With or without /api/v1 and a trailing slash: both work.',
};

/** `baseUrl` normalised: the body of the credentials' test-request expressions. */
const API_BASE_URL = '$credentials.baseUrl.trim().replace(/\\/+$/, "").replace(/\\/api\\/v1$/, "") + "/api/v1"';

/** `baseUrl` normalised inside n8n's expression for a credential's test request. */
export const API_BASE_URL_EXPRESSION = `={{${API_BASE_URL}}}`;

/** Fields both integration credentials share: where the two hosts are and the topic prefix. */
export const hostProperties: INodeProperties[] = [
	apiBaseUrlProperty,
	{
		displayName: 'Webhook Service Base URL',
		name: 'webhookBaseUrl',
		type: 'string',
		default: '',
		placeholder: 'https://webhooks.your-clinic-service.com',
		description:
			'The webhook service address your clinic service gave you, a separate host from the API (e.g. https://webhooks.example.com). The Clinic Trigger, the Clinic Event Log Trigger and the Webhook Subscription and Event operations need it; when it is set, the credential Test checks it too.',
	},
	{
		displayName: 'Topic Prefix',
		name: 'topicPrefix',
		type: 'string',
		default: '',
		placeholder: 'clinic-38729',
		description:
			'Your organisation\'s code for webhook events, given by your clinic service with the integration account (e.g. clinic-38729). The triggers and the Webhook Subscription and Event operations need it.',
	},
	{
		displayName: 'CFDI Download Query Parameter',
		name: 'cfdiQueryParameter',
		type: 'string',
		default: DEFAULT_CFDI_QUERY_PARAMETER,
		description:
			'Leave it as token unless your clinic service\'s support tells you otherwise: the name under which invoice PDF and XML downloads carry the sign-in',
	},
];

/** Hidden fields n8n fills through preAuthentication; the access token is the expirable one. */
export const sessionProperties: INodeProperties[] = [
	{
		displayName: 'Access Token',
		name: 'accessToken',
		type: 'hidden',
		typeOptions: { expirable: true, password: true },
		default: '',
	},
	{
		displayName: 'Expires At',
		name: 'expiresAt',
		type: 'hidden',
		typeOptions: { password: true },
		default: '',
	},
	{
		// Key of the Clinic Trigger's subscription secrets: kept here, encrypted, so that no
		// secret has to be stored in the workflow (n8n 1.x copies that into every execution).
		displayName: 'Webhook Signing Key',
		name: 'webhookSigningKey',
		type: 'hidden',
		typeOptions: { password: true },
		default: '',
	},
	{
		displayName: 'Session Fingerprint',
		name: 'sessionFingerprint',
		type: 'hidden',
		typeOptions: { password: true },
		default: '',
	},
];

/** `webhookBaseUrl` trimmed of spaces and trailing slashes, inside n8n's expression. */
const WEBHOOK_BASE_URL_EXPRESSION = '$credentials.webhookBaseUrl.trim().replace(/\\/+$/, "")';

/**
 * A cheap authenticated read: the Test button proves the whole chain with it. The sign-in
 * itself proves the API Base URL; the read then goes to the webhook service when its
 * address is set (the trigger needs it), else to the API.
 */
export const integrationTestRequest: ICredentialTestRequest = {
	request: {
		baseURL: `={{ ($credentials.webhookBaseUrl || "").trim() ? ${WEBHOOK_BASE_URL_EXPRESSION} : ${API_BASE_URL} }}`,
		url: '={{ ($credentials.webhookBaseUrl || "").trim() ? "/webhooks" : "/invoice_item_locations" }}',
		method: 'GET',
	},
};
