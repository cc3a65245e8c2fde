/** The catalog as node-panel options, for the trigger and the action node alike. */
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { EVENTS, TOPICS } from './catalog';

/**
 * Every event of every topic, value `<suffix>:<name>`, named as people say it
 * ("Consultation Finished"); `action` is the name n8n gives a trigger added for it
 * ("On consultation finished"). The service's own spelling is in the hint under the name.
 */
export const eventOptions: INodePropertyOptions[] = [...EVENTS]
	.sort((a, b) => a.label.localeCompare(b.label))
	.map((event) => ({
		name: event.label,
		value: event.key,
		action: event.action,
		description: `The service calls it ${event.name}, on the topic ending in .${event.suffix}`,
	}));

/** Catalog topics: value is the suffix the credential's prefix completes. */
export const topicOptions: INodePropertyOptions[] = [...TOPICS]
	.sort((a, b) => a.label.localeCompare(b.label))
	.map((topic) => ({ name: topic.label, value: topic.suffix, description: `The topic that ends in .${topic.suffix}` }));

/**
 * Every distinct event name of the catalog. Names shared by several topics (`created`)
 * are said with all their labels.
 */
export const eventNameOptions: INodePropertyOptions[] = [...new Set(EVENTS.map((event) => event.name))]
	.map((name) => ({
		name: EVENTS.filter((event) => event.name === name)
			.map((event) => event.label)
			.join(' / '),
		value: name,
		description: `Sent as "${name}"`,
	}))
	.sort((a, b) => a.name.localeCompare(b.name));

/**
 * A canvas subtitle expression that names the chosen events as the panel does. The
 * labels are written into the expression: subtitles cannot call node code.
 */
export function eventsSubtitle(parameter: string): string {
	const labels = JSON.stringify(Object.fromEntries(EVENTS.map((event) => [event.key, event.label])));
	return `={{ ($parameter["${parameter}"] || []).map((key) => (${labels})[key] || key).join(", ") }}`;
}

/** The triggers' Events parameter: the whole catalog, with how that trigger uses the choice. */
export function eventsProperty(description: string): INodeProperties {
	return {
		displayName: 'Events',
		name: 'events',
		type: 'multiOptions',
		options: eventOptions,
		default: [],
		required: true,
		description,
	};
}
