/**
 * A sign-in that fails, inside real n8n 1.123 and 2.41: the user reads what is wrong with
 * the credential (not "could not reach the service"), and n8n asks for a token once per
 * execution, not once per item (a refused refresh token not again at all). Each case runs 3
 * items over 2 executions in one running n8n.
 */
import { ClinicApi } from '../../credentials/ClinicApi.credentials';
import { passwordCredentialData, type Simulator } from '../simulator';
import { ALL_N8N_VERSIONS, importedCredentialId, nodeError, nodeJson, runManually, type WorkflowImport } from './harness';
import { useClinicN8n } from './support/clinicN8n';
import { chain, clinicNode, manualTrigger, setNode } from './support/workflows';

interface Case {
	title: string;
	/** The Clinic node's "On Error: Continue (regular output)": every item is tried. */
	continueOnFail?: boolean;
	credentialType: 'clinicApi' | 'clinicRefreshTokenApi';
	/** The credential's data, given the running simulator. */
	data: (sim: Simulator) => Record<string, unknown>;
	/** Words that name the cause and the credential to fix. */
	message: RegExp;
	/** What must never be printed: the password or token of the credential. */
	secret: (sim: Simulator) => string;
	/** A refused refresh token is never sent again by the same n8n process: one request in all. */
	refusedOnce?: boolean;
}

const CASES: Case[] = [
	{
		title: 'wrong password',
		credentialType: 'clinicApi',
		data: (sim) => passwordCredentialData(sim, { password: 'not-the-password' }),
		message: /refused the username or password.*Check both in the Clinic API credential/,
		secret: () => 'not-the-password',
	},
	{
		title: 'wrong password, On Error: Continue',
		continueOnFail: true,
		credentialType: 'clinicApi',
		data: (sim) => passwordCredentialData(sim, { password: 'still-not-the-password' }),
		message: /refused the username or password.*Check both in the Clinic API credential/,
		secret: () => 'still-not-the-password',
	},
	{
		title: 'two-factor account with the password credential',
		credentialType: 'clinicApi',
		data: (sim) => passwordCredentialData(sim, { username: sim.twoFactor.username, password: sim.twoFactor.password }),
		message: /two-factor verification.*Use the "Clinic Refresh Token API" credential/,
		secret: (sim) => sim.twoFactor.password,
	},
	{
		title: 'refused refresh token',
		credentialType: 'clinicRefreshTokenApi',
		data: (sim) => ({
			baseUrl: sim.apiBaseUrl,
			webhookBaseUrl: sim.webhooksBaseUrl,
			topicPrefix: sim.topicPrefix,
			refreshToken: 'rt-revoked-long-ago-0123456789',
		}),
		message: /refused the refresh token.*paste it into the Clinic Refresh Token API credential/,
		secret: () => 'rt-revoked-long-ago-0123456789',
		refusedOnce: true,
	},
];

const credentialId = (index: number) => `clinicSignIn00${index}`;

/** A credential that signs in, for what n8n stores after a refused token. */
const WORKING: Case = {
	title: 'working credential',
	credentialType: 'clinicApi',
	data: (sim) => passwordCredentialData(sim),
	message: /./,
	secret: (sim) => sim.demo.password,
};
const WORKING_INDEX = CASES.length;

/** Manual Trigger -> three items -> Clinic: Get Consultation for each. */
function workflowFor(testCase: Case, index: number): WorkflowImport {
	return chain(`Sign-in: ${testCase.title}`, [
		manualTrigger(),
		setNode('Three Items', [{ name: 'ids', value: '={{ [1, 2, 3] }}', type: 'array' }]),
		{ name: 'Split', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'ids', options: {} } },
		clinicNode(
			'Clinic',
			{ resource: 'consultation', operation: 'get', consultationId: '={{ $json.ids }}' },
			{
				typeVersion: 1,
				credentialType: testCase.credentialType,
				credential: { id: credentialId(index), name: `Sign-in ${index}` },
				onError: testCase.continueOnFail ? 'continueRegularOutput' : undefined,
			},
		),
	]);
}

describe.each(ALL_N8N_VERSIONS)('sign-in failures in n8n %s', (version) => {
	let sim: Simulator;
	let ids: string[] = [];

	const clinic = useClinicN8n({
		version,
		label: 'sign-in',
		laneServer: true,
		credentials: (sim) =>
			[...CASES, WORKING].map((testCase, index) => ({
				id: credentialId(index),
				name: `Sign-in ${index}`,
				type: testCase.credentialType,
				data: testCase.data(sim),
			})),
		workflows: () => [...CASES, WORKING].map((testCase, index) => workflowFor(testCase, index)),
	});
	const { n8n } = clinic;
	beforeAll(() => {
		sim = clinic.sim;
		ids = clinic.workflowIds;
	});

	it.each(CASES.map((testCase, index) => [testCase.title, index] as const))(
		'%s: the message names the cause and the credential; at most one token request per execution (3 items, 2 executions)',
		(_title, index) =>
			n8n.run(async () => {
				const testCase = CASES[index];
				sim.clearLog();
				const tokenRequestsBefore = sim.tokenRequests();
				for (let execution = 1; execution <= 2; execution++) {
					const result = await runManually(clinic.server, ids[index], { allowFailure: true });
					if (testCase.continueOnFail) {
						// Every item gets the sign-in error; none of them asks for a token again.
						const errors = nodeJson(result.run!, 'Clinic').map((item) => String(item.error));
						expect(errors).toHaveLength(3);
						for (const message of errors) expect(message).toMatch(testCase.message);
					} else {
						expect(result.ok).toBe(false);
						const error = nodeError(result.run!, 'Clinic');
						expect(error?.message).toMatch(testCase.message);
						expect(`${error?.message} ${error?.description}`).not.toMatch(/Could not reach/);
					}
					expect(clinic.server.log()).not.toContain(testCase.secret(sim));
					expect(sim.tokenRequests() - tokenRequestsBefore).toBe(testCase.refusedOnce ? 1 : execution);
				}
				// The items were never sent: only token requests reached the service.
				expect(sim.log.filter((entry) => !entry.path.endsWith('/oauth/token'))).toEqual([]);
			})(),
		5 * 60_000,
	);

	it(
		'after a revoked token and the sign-in that followed, the stored credential holds only its own fields',
		n8n.run(async (ctx) => {
			expect((await runManually(clinic.server, ids[WORKING_INDEX])).ok).toBe(true);
			sim.revokeAccessTokens();
			const tokenRequestsBefore = sim.tokenRequests();
			expect((await runManually(clinic.server, ids[WORKING_INDEX])).ok).toBe(true);
			// The revoked token was refused, and n8n signed in anew and stored the new session.
			expect(sim.tokenRequests()).toBeGreaterThan(tokenRequestsBefore);
			const exported = await ctx.runN8n(['export:credentials', `--id=${importedCredentialId(ctx, credentialId(WORKING_INDEX))}`, '--decrypted'], { logName: 'export-credentials' });
			const match = /\[\s*\{[\s\S]*\}\s*\]/.exec(exported.stdout);
			expect(match).not.toBeNull();
			const [stored] = JSON.parse(match![0]) as Array<{ data: Record<string, unknown> }>;
			// n8n 1.123 stores its own credential setting beside the fields (allowed HTTP request domains).
			const declared = new Set([...new ClinicApi().properties.map((property) => property.name), 'allowedHttpRequestDomains', 'allowedDomains']);
			expect(Object.keys(stored.data).filter((key) => !declared.has(key))).toEqual([]);
			expect(stored.data).not.toHaveProperty('staleAccessToken');
			expect(stored.data.accessToken).toBeTruthy();
		}),
		5 * 60_000,
	);
});
