/**
 * Sends `GET <url>` with the JSON body `{"limit": 1}` through one n8n install's own request
 * helpers (its n8n-core, as a node's `this.helpers` calls them) and prints what each answered
 * as one JSON line: the number of events, or the error. Usage:
 *   node getBodyProbe.cjs <install>/node_modules <n8n major> <url>   (token in CLINIC_TOKEN)
 */
const path = require('node:path');

const [modules, major, url] = process.argv.slice(2);
const load = (name) => require(path.join(modules, name));
load('reflect-metadata');
const utils = path.join(modules, 'n8n-core/dist/execution-engine/node-execution-context/utils');
const helpers =
	Number(major) >= 2 ? require(path.join(utils, 'request-helpers/authentication.js')) : require(path.join(utils, 'request-helper-functions.js'));

const node = { id: '1', name: 'Clinic', type: 'n8n-nodes-clinic.clinic', typeVersion: 1, position: [0, 0], parameters: {} };
// Only the credential's authenticate step stands in: the bearer header our credential adds.
const additionalData = {
	credentialsHelper: {
		getParentTypes: () => [],
		preAuthentication: async () => undefined,
		authenticate: async (_credentials, _type, options) => {
			options.headers = { ...(options.headers ?? {}), Authorization: `Bearer ${process.env.CLINIC_TOKEN}` };
			return options;
		},
	},
};
const context = { helpers: {}, getNode: () => node, logger: { warn() {}, debug() {} }, getCredentials: async () => ({}) };
const credentials = { credentialsDecrypted: { id: '1', name: 'Clinic', type: 'clinicApi', data: {} } };
const count = (body) => (Array.isArray(body) ? body.length : `not a list: ${JSON.stringify(body)}`);

(async () => {
	const modern = await helpers.httpRequestWithAuthentication.call(
		context,
		'clinicApi',
		{ method: 'GET', url, body: { limit: 1 }, json: true },
		undefined,
		node,
		additionalData,
		credentials,
	);
	const legacy = await helpers.requestWithAuthentication.call(
		context,
		'clinicApi',
		{ method: 'GET', uri: url, body: { limit: 1 }, json: true },
		undefined,
		node,
		additionalData,
		credentials,
		0,
	);
	console.log(JSON.stringify({ httpRequestWithAuthentication: count(modern), requestWithAuthentication: count(legacy) }));
})().catch((error) => {
	console.log(JSON.stringify({ error: String(error?.message ?? error) }));
	process.exitCode = 1;
});
