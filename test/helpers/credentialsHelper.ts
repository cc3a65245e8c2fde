/**
 * An in-memory stand-in for n8n's credentials database plus a CredentialsHelper that
 * follows n8n's own (packages/cli/src/credentialsHelper.ts) line by line where it
 * matters to a credential: defaults are applied on decryption, `authenticate` runs the
 * type's function, `preAuthentication` runs only when the expirable hidden field is ''
 * (or n8n says the credentials expired, or the node is the Test button's mock node),
 * keeps only the keys the hook returned, and saves them into the store as n8n saves them
 * into its database. Everything a test wants to know about "what n8n would have saved"
 * is in the `CredentialStore`.
 */
import './n8nEnv';

import { getAdditionalKeys } from 'n8n-core';
import {
	ICredentials,
	ICredentialsHelper,
	NodeHelpers,
	UserError,
	Workflow,
	deepCopy,
	getCredentialOwnRequestAllowedDomains,
	isExpression,
} from 'n8n-workflow';
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	ICredentialsEncrypted,
	ICredentialsExpressionResolveValues,
	IExecuteData,
	IHttpRequestHelper,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeParameters,
	INodeProperties,
	INodeType,
	INodeTypes,
	IRequestOptionsSimplified,
	IWorkflowDataProxyAdditionalKeys,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';

import { ClinicApi } from '../../credentials/ClinicApi.credentials';
import { ClinicPatientPortalApi } from '../../credentials/ClinicPatientPortalApi.credentials';
import { ClinicRefreshTokenApi } from '../../credentials/ClinicRefreshTokenApi.credentials';

export type ClinicCredentialType = 'clinicApi' | 'clinicRefreshTokenApi' | 'clinicPatientPortalApi';

/** The package's credential types, loaded from source as n8n loads them from dist. */
export const credentialTypes: Record<ClinicCredentialType, ICredentialType> = {
	clinicApi: new ClinicApi(),
	clinicRefreshTokenApi: new ClinicRefreshTokenApi(),
	clinicPatientPortalApi: new ClinicPatientPortalApi(),
};

export function getCredentialType(name: string): ICredentialType {
	const type = (credentialTypes as Record<string, ICredentialType>)[name];
	if (!type) throw new Error(`Unknown credential type "${name}"`);
	return type;
}

export interface StoredCredential {
	id: string;
	name: string;
	type: string;
	/** The decrypted data as n8n keeps it in its database (no defaults applied). */
	data: ICredentialDataDecryptedObject;
}

/** One write n8n made to a credential (preAuthentication saving a new token, ...). */
export interface CredentialUpdate {
	id: string;
	type: string;
	data: ICredentialDataDecryptedObject;
	at: number;
}

/** n8n's credentials table, in memory. Keep it between runs to simulate later executions. */
export class CredentialStore {
	private readonly records = new Map<string, StoredCredential>();

	/** Every save n8n made, oldest first (each holds the whole data saved). */
	readonly updates: CredentialUpdate[] = [];

	private nextId = 1;

	/** Saves a credential as the user does in the editor; returns the reference a node holds. */
	add(type: string, data: ICredentialDataDecryptedObject, options: { id?: string; name?: string } = {}): INodeCredentialsDetails {
		getCredentialType(type);
		const id = options.id ?? String(this.nextId++);
		const name = options.name ?? `${getCredentialType(type).displayName} account`;
		this.records.set(id, { id, name, type, data: deepCopy(data) });
		return { id, name };
	}

	/**
	 * The user edits a saved credential and saves it: n8n keeps the fields the editor did
	 * not change (hidden ones such as the stored tokens included) and overwrites the rest.
	 */
	edit(typeOrId: string, changes: ICredentialDataDecryptedObject): void {
		const record = this.find(typeOrId);
		record.data = { ...record.data, ...deepCopy(changes) };
	}

	/** The credential with this id, or the first (only) one of this type. */
	find(typeOrId: string): StoredCredential {
		const byId = this.records.get(typeOrId);
		if (byId) return byId;
		for (const record of this.records.values()) if (record.type === typeOrId) return record;
		throw new Error(`No stored credential "${typeOrId}"`);
	}

	has(typeOrId: string): boolean {
		try {
			this.find(typeOrId);
			return true;
		} catch {
			return false;
		}
	}

	/** A copy of what is saved for this credential (type name or id). */
	data(typeOrId: string): ICredentialDataDecryptedObject {
		return deepCopy(this.find(typeOrId).data);
	}

	/** The reference (`{id, name}`) a node puts under `node.credentials[type]`. */
	reference(typeOrId: string): INodeCredentialsDetails {
		const { id, name } = this.find(typeOrId);
		return { id, name };
	}

	all(): StoredCredential[] {
		return [...this.records.values()].map((record) => deepCopy(record));
	}

	/** What n8n's repository does: look the row up by id and type. */
	load(nodeCredential: INodeCredentialsDetails, type: string): StoredCredential {
		if (!nodeCredential.id) {
			throw new UserError(
				`Credential "${nodeCredential.name}" of type "${type}" has no ID.`,
			);
		}
		const record = this.records.get(nodeCredential.id);
		if (!record || record.type !== type) {
			throw new UserError(`Credential with ID "${nodeCredential.id}" does not exist for type "${type}".`);
		}
		return record;
	}

	save(nodeCredential: INodeCredentialsDetails, type: string, data: ICredentialDataDecryptedObject): void {
		const record = this.load(nodeCredential, type);
		record.data = deepCopy(data);
		this.updates.push({ id: record.id, type, data: deepCopy(data), at: Date.now() });
	}
}

/** n8n-core's `Credentials` without the encryption: the store keeps plain data. */
class MemoryCredentials extends ICredentials {
	constructor(store: CredentialStore, nodeCredentials: INodeCredentialsDetails, type: string) {
		super(nodeCredentials, type, JSON.stringify(store.load(nodeCredentials, type).data));
	}

	async getData(): Promise<ICredentialDataDecryptedObject> {
		return JSON.parse(this.data ?? '{}') as ICredentialDataDecryptedObject;
	}

	getDataToSave(): ICredentialsEncrypted {
		return { id: this.id, name: this.name, type: this.type, data: this.data };
	}

	async setData(data: ICredentialDataDecryptedObject): Promise<void> {
		this.data = JSON.stringify(data);
	}

	async updateData(toUpdate: ICredentialDataDecryptedObject, toDelete: string[] = []): Promise<void> {
		const data = { ...(await this.getData()), ...toUpdate };
		for (const key of toDelete) delete data[key];
		await this.setData(data);
	}
}

/**
 * n8n's `restrictToCredentialDomains`: what a preAuthentication hook gets as `this` is
 * exactly `{ helpers: { httpRequest } }`, the node's real httpRequest helper behind the
 * credential's own domain allowlist.
 */
function restrictToCredentialDomains(
	helpers: IHttpRequestHelper,
	credentials: ICredentialDataDecryptedObject,
): IHttpRequestHelper {
	return {
		helpers: {
			httpRequest: async (requestOptions: IHttpRequestOptions): Promise<unknown> => {
				const allowedDomains = getCredentialOwnRequestAllowedDomains(credentials);
				if (allowedDomains === undefined) {
					return await helpers.helpers.httpRequest(requestOptions);
				}
				if (requestOptions.allowedDomains !== undefined) {
					throw new UserError(
						'This credential restricts requests to specific domains, which cannot be combined with the domains its authentication step asks for.',
					);
				}
				return await helpers.helpers.httpRequest({ ...requestOptions, allowedDomains });
			},
		},
	};
}

/** The mock node and node types n8n resolves credential expressions with. */
const mockNode = { name: '', typeVersion: 1, type: 'mock', position: [0, 0], parameters: {} } as unknown as INode;
const mockNodeTypes: INodeTypes = {
	getKnownTypes: () => ({}),
	getByName: () => ({ description: { properties: [] } }) as unknown as INodeType,
	getByNameAndVersion: () => ({ description: { properties: [] } }) as unknown as INodeType,
};

/** What `preAuthentication` did, for tests that assert on n8n's decisions. */
export interface PreAuthenticationCall {
	type: string;
	nodeName: string;
	credentialsExpired: boolean;
	/** Whether the type's hook ran (n8n skips it while the expirable field holds a value). */
	ran: boolean;
	/** Whether n8n saved the result. */
	saved: boolean;
}

export class TestCredentialsHelper extends ICredentialsHelper {
	/** Every call n8n-core made to preAuthentication, oldest first. */
	readonly preAuthenticationCalls: PreAuthenticationCall[] = [];

	constructor(readonly store: CredentialStore) {
		super();
	}

	getParentTypes(name: string): string[] {
		const type = getCredentialType(name);
		const parents: string[] = [];
		for (const parent of type.extends ?? []) {
			parents.push(parent, ...((credentialTypes as Record<string, ICredentialType>)[parent] ? this.getParentTypes(parent) : []));
		}
		return parents;
	}

	isCredentialUsableByNode(credentialType: string): boolean {
		const type = (credentialTypes as Record<string, ICredentialType>)[credentialType];
		return !type?.restrictToSupportedNodes;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		incomingRequestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const requestOptions = incomingRequestOptions;
		const credentialType = getCredentialType(typeName);
		if (typeof credentialType.authenticate === 'function') {
			return await credentialType.authenticate(credentials, requestOptions as IHttpRequestOptions);
		}
		if (credentialType.authenticate && typeof credentialType.authenticate === 'object') {
			if (!workflow || !node) throw new Error('Workflow and node are required for declarative credential authentication');
			const { authenticate } = credentialType;
			requestOptions.headers ??= {};
			if (authenticate.type === 'generic') {
				for (const [outerKey, outerValue] of Object.entries(authenticate.properties)) {
					for (const [key, value] of Object.entries(outerValue as Record<string, string>)) {
						const keyResolved = this.resolveValue(key, { $credentials: credentials }, workflow, node);
						const valueResolved = this.resolveValue(value, { $credentials: credentials }, workflow, node);
						const target = requestOptions as unknown as Record<string, Record<string, string>>;
						target[outerKey] ??= {};
						target[outerKey][keyResolved] = valueResolved;
					}
				}
			}
		}
		return requestOptions as IHttpRequestOptions;
	}

	async preAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		node: INode,
		credentialsExpired: boolean,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = getCredentialType(typeName);
		const call: PreAuthenticationCall = {
			type: typeName,
			nodeName: node?.name,
			credentialsExpired,
			ran: false,
			saved: false,
		};
		this.preAuthenticationCalls.push(call);

		const expirableProperty = credentialType.properties.find(
			(property) => property.type === 'hidden' && property?.typeOptions?.expirable === true,
		);
		if (expirableProperty?.name === undefined) return undefined;

		// The Test button runs on a mock NoOp node whose only parameter is `temp`.
		const isTestingCredentials = node?.parameters?.temp === '' && node?.type === 'n8n-nodes-base.noOp';

		if (typeof credentialType.preAuthentication === 'function') {
			if (credentials[expirableProperty.name] === '' || credentialsExpired || isTestingCredentials) {
				call.ran = true;
				const output = await credentialType.preAuthentication.call(
					restrictToCredentialDomains(helpers, credentials),
					credentials,
				);
				if (output[expirableProperty.name] === undefined) return undefined;

				if (node.credentials) {
					const nodeCredentials = node.credentials[credentialType.name];
					const storedData = await (await this.getCredentials(nodeCredentials, credentialType.name)).getData();
					const dataToPersist: ICredentialDataDecryptedObject = { ...storedData };
					for (const [key, value] of Object.entries(output as ICredentialDataDecryptedObject)) {
						if (key === expirableProperty.name || !isExpression(storedData[key])) dataToPersist[key] = value;
					}
					await this.updateCredentials(nodeCredentials, credentialType.name, dataToPersist);
					call.saved = true;
					return Object.assign(credentials, output);
				}
			}
		}
		return undefined;
	}

	async runPreAuthentication(
		helpers: IHttpRequestHelper,
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
	): Promise<ICredentialDataDecryptedObject | undefined> {
		const credentialType = getCredentialType(typeName);
		if (typeof credentialType.preAuthentication !== 'function') return undefined;
		const output = await credentialType.preAuthentication.call(
			restrictToCredentialDomains(helpers, credentials),
			credentials,
		);
		return (output as ICredentialDataDecryptedObject) ?? undefined;
	}

	private resolveValue(
		parameterValue: string,
		additionalKeys: IWorkflowDataProxyAdditionalKeys,
		workflow: Workflow,
		node: INode,
	): string {
		if (!isExpression(parameterValue)) return parameterValue;
		const returnValue = workflow.expression.getSimpleParameterValue(node, parameterValue, 'internal', additionalKeys, undefined, '');
		if (!returnValue) return '';
		return returnValue.toString();
	}

	async getCredentials(nodeCredential: INodeCredentialsDetails, type: string): Promise<ICredentials> {
		return new MemoryCredentials(this.store, nodeCredential, type);
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		const credentialType = getCredentialType(type);
		if (!credentialType.extends) return credentialType.properties;
		const combined: INodeProperties[] = [];
		for (const parent of credentialType.extends) {
			NodeHelpers.mergeNodeProperties(combined, this.getCredentialsProperties(parent));
		}
		NodeHelpers.mergeNodeProperties(combined, credentialType.properties);
		return combined;
	}

	async getDecrypted(
		additionalData: IWorkflowExecuteAdditionalData,
		nodeCredentials: INodeCredentialsDetails,
		type: string,
		mode: WorkflowExecuteMode,
		executeData?: IExecuteData,
		raw?: boolean,
		expressionResolveValues?: ICredentialsExpressionResolveValues,
	): Promise<ICredentialDataDecryptedObject> {
		const decryptedDataOriginal = deepCopy(this.store.load(nodeCredentials, type).data);
		if (raw === true) return decryptedDataOriginal;
		return await this.applyDefaultsAndOverwrites(
			additionalData,
			decryptedDataOriginal,
			type,
			mode,
			executeData,
			expressionResolveValues,
		);
	}

	/** n8n's applyDefaultsAndOverwrites without overwrites (none are configured in tests). */
	async applyDefaultsAndOverwrites(
		additionalData: IWorkflowExecuteAdditionalData,
		decryptedDataOriginal: ICredentialDataDecryptedObject,
		type: string,
		mode: WorkflowExecuteMode,
		executeData?: IExecuteData,
		expressionResolveValues?: ICredentialsExpressionResolveValues,
	): Promise<ICredentialDataDecryptedObject> {
		const credentialsProperties = this.getCredentialsProperties(type);
		let decryptedData = NodeHelpers.getNodeParameters(
			credentialsProperties,
			{ ...decryptedDataOriginal } as INodeParameters,
			true,
			false,
			null,
			null,
		) as ICredentialDataDecryptedObject;

		if (decryptedDataOriginal.oauthTokenData !== undefined) {
			decryptedData.oauthTokenData = decryptedDataOriginal.oauthTokenData;
		}

		const additionalKeys = getAdditionalKeys(additionalData, mode, null, { isCredential: true });

		if (expressionResolveValues) {
			try {
				decryptedData = expressionResolveValues.workflow.expression.getParameterValue(
					decryptedData as INodeParameters,
					expressionResolveValues.runExecutionData,
					expressionResolveValues.runIndex,
					expressionResolveValues.itemIndex,
					expressionResolveValues.node.name,
					expressionResolveValues.connectionInputData,
					mode,
					additionalKeys,
					executeData,
					false,
					decryptedData,
				) as ICredentialDataDecryptedObject;
			} catch (e) {
				(e as Error).message += ' [Error resolving credentials]';
				throw e;
			}
		} else {
			const workflow = new Workflow({ nodes: [mockNode], connections: {}, active: false, nodeTypes: mockNodeTypes });
			await workflow.expression.acquireIsolate();
			try {
				decryptedData = workflow.expression.getComplexParameterValue(
					mockNode,
					decryptedData as INodeParameters,
					mode,
					additionalKeys,
					undefined,
					undefined,
					decryptedData,
				) as ICredentialDataDecryptedObject;
			} finally {
				await workflow.expression.releaseIsolate();
			}
		}
		return decryptedData;
	}

	async updateCredentials(
		nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		const credentials = await this.getCredentials(nodeCredentials, type);
		await credentials.setData(data);
		this.store.save(nodeCredentials, type, await credentials.getData());
	}

	async updateCredentialsOauthTokenData(
		nodeCredentials: INodeCredentialsDetails,
		type: string,
		data: ICredentialDataDecryptedObject,
	): Promise<void> {
		const credentials = await this.getCredentials(nodeCredentials, type);
		await credentials.updateData({ oauthTokenData: data.oauthTokenData });
		this.store.save(nodeCredentials, type, await credentials.getData());
	}
}
