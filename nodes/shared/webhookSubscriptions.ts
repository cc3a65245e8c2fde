/**
 * The webhook service's subscriptions (`/webhooks`): list, create, remove, and what
 * "live" means. The one client of them, for the action node and the Clinic Trigger.
 */
import type { IDataObject, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { sameUrl } from './urls';

import type { ClinicClient } from './transport';

/** A subscription as GET /webhooks lists it. */
export interface RemoteSubscription extends IDataObject {
	id: number | string;
	url?: string;
	event_topic?: string;
	event_name?: string;
	status?: string;
	deleted_at?: string | null;
	authentication_data?: { secret?: string };
}

/**
 * Takes a shared secret out of an `authentication_data` object. The record keeps every
 * other field and says only whether a secret was there.
 */
export function withoutSecret(record: IDataObject): IDataObject {
	const authentication = record.authentication_data;
	if (!authentication || typeof authentication !== 'object' || Array.isArray(authentication)) {
		return { ...record, hasSecret: false };
	}
	const { secret, ...rest } = authentication as IDataObject;
	return { ...record, authentication_data: rest, hasSecret: secret !== undefined && secret !== null && secret !== '' };
}

/** Live = enabled and not deleted (a subscription the service still delivers to). */
export function isLive(subscription: RemoteSubscription): boolean {
	const status = subscription.status;
	return (status === undefined || status === 'enabled') && !subscription.deleted_at;
}

/** The id in the (undocumented) answer to POST /webhooks: `{webhook: {id}}`, `{id}` or `{data: {id}}`. */
export function idFromCreateAnswer(answer: unknown): number | string | undefined {
	if (!answer || typeof answer !== 'object') return undefined;
	const record = answer as Record<string, unknown>;
	for (const candidate of [record.webhook, record.data, record]) {
		if (candidate && typeof candidate === 'object') {
			const id = (candidate as Record<string, unknown>).id;
			if (typeof id === 'number' || (typeof id === 'string' && id !== '')) return id;
		}
	}
	return undefined;
}

export interface NewSubscription {
	url: string;
	/** Complete topic, e.g. `clinic-38729.consultation`. */
	topic: string;
	eventName: string;
	secret: string;
}

/**
 * Subscriptions on the webhook service. The token goes where the service wants it
 * (the transport's rule): bearer on GET, in the JSON body on POST and DELETE.
 */
export class WebhookSubscriptions {
	constructor(
		private readonly client: ClinicClient,
		private readonly node: () => INode,
	) {}

	async list(itemIndex = 0): Promise<RemoteSubscription[]> {
		const answer = await this.client.request<unknown>(
			{ host: 'webhooks', method: 'GET', path: '/webhooks', auth: 'integration', subject: 'The webhook subscription list' },
			itemIndex,
		);
		const list = Array.isArray(answer) ? answer : (answer as { webhooks?: unknown } | null)?.webhooks;
		if (!Array.isArray(list)) {
			throw new NodeOperationError(this.node(), 'The webhook service answered the subscription list in an unexpected shape', {
				itemIndex,
				description: 'Expected {"webhooks": [...]}. Check the Webhook Service Base URL of the credential.',
			});
		}
		return list.filter(
			(item): item is RemoteSubscription =>
				!!item && typeof item === 'object' && ['number', 'string'].includes(typeof (item as RemoteSubscription).id),
		);
	}

	/** Subscribes; answers what the service answered (its shape is not documented). */
	async create(subscription: NewSubscription, subject: string, itemIndex = 0): Promise<unknown> {
		const { url, topic, eventName, secret } = subscription;
		return await this.client.request<unknown>(
			{
				host: 'webhooks',
				method: 'POST',
				path: '/webhooks',
				body: { url, topic, event_name: eventName, authentication_data: { secret } },
				auth: 'integration',
				subject,
			},
			itemIndex,
		);
	}

	/** Removes one subscription; the service's 404 reaches the caller as an error with httpCode 404. */
	async remove(id: number | string, itemIndex = 0): Promise<void> {
		await this.client.request(
			{
				host: 'webhooks',
				method: 'DELETE',
				path: `/webhooks/${encodeURIComponent(String(id))}`,
				body: {},
				auth: 'integration',
				subject: `Webhook subscription ${String(id)}`,
			},
			itemIndex,
		);
	}

	/** Removes one subscription; false when it was already gone (the service's 404). */
	async removeIfPresent(id: number | string, itemIndex = 0): Promise<boolean> {
		try {
			await this.remove(id, itemIndex);
			return true;
		} catch (error) {
			if (httpCodeOf(error) === '404') return false;
			throw new NodeApiError(this.node(), { message: messageOf(error) } as JsonObject, {
				message: `Could not remove webhook subscription ${String(id)}: ${messageOf(error)}`,
				description: descriptionOf(error),
				httpCode: httpCodeOf(error) || undefined,
			});
		}
	}

	/**
	 * Subscribes and answers the new subscription's id. The answer's shape is not
	 * documented: without an id in it, the subscription is found in the list by address,
	 * topic, event name and (where listed) secret.
	 */
	async subscribe(subscription: NewSubscription, subject: string): Promise<number | string> {
		const id = idFromCreateAnswer(await this.create(subscription, subject));
		if (id !== undefined) return id;
		const { url, topic, eventName, secret } = subscription;
		const created = (await this.list())
			.filter(
				(s) =>
					isLive(s) &&
					sameUrl(s.url ?? '', url) &&
					s.event_topic === topic &&
					s.event_name === eventName &&
					(s.authentication_data?.secret === undefined || s.authentication_data.secret === secret),
			)
			.pop();
		if (created) return created.id;
		throw new NodeApiError(this.node(), { message: 'Subscription id not found' } as JsonObject, {
			message: 'The webhook service accepted the subscription but did not say its id, and it is not in the list',
		});
	}
}

/** The parts of an error the trigger's messages repeat: n8n's httpCode, message and description. */
export function httpCodeOf(error: unknown): string {
	const code = (error as { httpCode?: unknown } | null)?.httpCode;
	return typeof code === 'string' ? code : '';
}

export function messageOf(error: unknown): string {
	const message = (error as { message?: unknown } | null)?.message;
	return typeof message === 'string' && message ? message : 'unknown error';
}

export function descriptionOf(error: unknown): string {
	const description = (error as { description?: unknown } | null)?.description;
	return typeof description === 'string' ? description : '';
}
