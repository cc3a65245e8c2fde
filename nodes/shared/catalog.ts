/**
 * The one catalog of webhook topics and event names. The action node, the trigger,
 * the simulator and the README table all read it, so a spelling lives only here.
 * Spellings are the service's own: `consultation-schedule-create` and
 * `prescription-cancel` are not past tense, and that is correct.
 */
export interface TopicDefinition {
	/** Suffix joined to the organisation's topic prefix with a dot. */
	suffix: string;
	/** Name shown in the node panel. */
	label: string;
	events: readonly string[];
}

export const TOPICS: readonly TopicDefinition[] = [
	{ suffix: 'account', label: 'Account', events: ['created', 'updated'] },
	{
		suffix: 'invoice-item',
		label: 'Charge (Invoice Item)',
		events: ['invoice-item-created', 'invoice-item-updated', 'invoice-item-deleted'],
	},
	{
		suffix: 'prescription',
		label: 'Prescription',
		events: ['prescription-created', 'prescription-cancel', 'prescription-deleted'],
	},
	{
		suffix: 'consultation',
		label: 'Consultation',
		events: [
			'consultation-created',
			'consultation-updated',
			'consultation-finished',
			'consultation-deleted',
		],
	},
	{
		suffix: 'invoice-item-catalog',
		label: 'Charge Catalog',
		events: [
			'invoice-item-catalog-created',
			'invoice-item-catalog-updated',
			'invoice-item-catalog-deleted',
		],
	},
	{ suffix: 'invoice', label: 'Invoice', events: ['invoice-created', 'invoice-updated'] },
	{
		suffix: 'patient',
		label: 'Patient',
		events: ['patient-created', 'patient-updated', 'patient-deleted'],
	},
	{ suffix: 'waiting-room', label: 'Telehealth Waiting Room', events: ['patient-joined-twr'] },
	{
		suffix: 'consultation-schedule',
		label: 'Appointment (Consultation Schedule)',
		events: ['consultation-schedule-create', 'consultation-schedule-updated'],
	},
];

/** An event as the trigger and the action node offer it: unique across topics. */
export interface CatalogEvent {
	/** `<suffix>:<event name>`; the event names `created`/`updated` alone are ambiguous. */
	key: string;
	suffix: string;
	name: string;
	label: string;
}

export const EVENTS: readonly CatalogEvent[] = TOPICS.flatMap((topic) =>
	topic.events.map((name) => ({
		key: `${topic.suffix}:${name}`,
		suffix: topic.suffix,
		name,
		label: `${topic.label}: ${name}`,
	})),
);

export function findTopic(suffix: string): TopicDefinition | undefined {
	return TOPICS.find((topic) => topic.suffix === suffix);
}

export function findEvent(key: string): CatalogEvent | undefined {
	return EVENTS.find((event) => event.key === key);
}

/** A complete topic, e.g. `clinic-38729.patient`. The suffix alone is not a topic. */
export function fullTopic(prefix: string, suffix: string): string {
	return `${prefix}.${suffix}`;
}

/** Splits a full topic into prefix and a known suffix, or undefined when it is not one of ours. */
export function splitTopic(topic: string): { prefix: string; suffix: string } | undefined {
	for (const { suffix } of TOPICS) {
		const tail = `.${suffix}`;
		if (topic.endsWith(tail) && topic.length > tail.length) {
			return { prefix: topic.slice(0, -tail.length), suffix };
		}
	}
	return undefined;
}

/**
 * What is wrong with a topic prefix from a credential, or undefined when it is fine.
 * A prefix is the part before the dot (`clinic-38729`), never a whole topic.
 */
export function describeTopicPrefixProblem(prefix: string): string | undefined {
	if (!prefix) {
		return 'The Clinic credential has no Topic Prefix: add the prefix assigned to your organisation (the part before the dot, e.g. clinic-38729)';
	}
	if (/\s/.test(prefix)) return `The credential's Topic Prefix "${prefix}" contains spaces: enter it as given, e.g. clinic-38729`;
	if (prefix.endsWith('.')) {
		return `The credential's Topic Prefix "${prefix}" ends with a dot: enter it without the dot, e.g. ${prefix.slice(0, -1)}`;
	}
	const whole = splitTopic(prefix);
	if (whole) {
		return `The credential's Topic Prefix "${prefix}" is a whole topic: enter only the part before the dot, ${whole.prefix}`;
	}
	return undefined;
}
