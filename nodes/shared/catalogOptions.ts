/** The catalog as node-panel options, for the trigger and the action node alike. */
import type { INodePropertyOptions } from 'n8n-workflow';

import { EVENTS, TOPICS } from './catalog';

/** Every event of every topic, value `<suffix>:<name>`, labelled by topic: "Consultation: consultation-finished". */
export const eventOptions: INodePropertyOptions[] = [...EVENTS]
	.sort((a, b) => a.label.localeCompare(b.label))
	.map((event) => ({
		name: event.label,
		value: event.key,
		description: `Event "${event.name}" on topic "${event.suffix}" (sent as your Topic Prefix + ".${event.suffix}")`,
	}));

/** Catalog topics: value is the suffix the credential's prefix completes. */
export const topicOptions: INodePropertyOptions[] = [...TOPICS]
	.sort((a, b) => a.label.localeCompare(b.label))
	.map((topic) => ({ name: topic.label, value: topic.suffix, description: `The topic that ends in .${topic.suffix}` }));

/** Every distinct event name of the catalog. */
export const eventNameOptions: INodePropertyOptions[] = [...new Set(EVENTS.map((event) => event.name))]
	.sort((a, b) => a.localeCompare(b))
	.map((name) => ({ name, value: name }));
