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
	/** The service's own spellings, sent as event_name. */
	events: readonly string[];
	/** How the node panel says each event, in Title Case: "Consultation Finished". */
	labels: Readonly<Record<string, string>>;
}

/** A topic from its events (the service's spelling) and the name the panel gives each. */
function topic(suffix: string, label: string, labels: Record<string, string>): TopicDefinition {
	return { suffix, label, events: Object.keys(labels), labels };
}

export const TOPICS: readonly TopicDefinition[] = [
	topic('account', 'Account', {
		created: 'Account Created',
		updated: 'Account Updated',
	}),
	topic('invoice-item', 'Charge (Invoice Item)', {
		'invoice-item-created': 'Charge Created',
		'invoice-item-updated': 'Charge Updated',
		'invoice-item-deleted': 'Charge Deleted',
	}),
	topic('prescription', 'Prescription', {
		'prescription-created': 'Prescription Created',
		'prescription-cancel': 'Prescription Cancelled',
		'prescription-deleted': 'Prescription Deleted',
	}),
	topic('consultation', 'Consultation', {
		'consultation-created': 'Consultation Created',
		'consultation-updated': 'Consultation Updated',
		'consultation-finished': 'Consultation Finished',
		'consultation-deleted': 'Consultation Deleted',
	}),
	topic('invoice-item-catalog', 'Charge Catalog', {
		'invoice-item-catalog-created': 'Charge Catalog Item Created',
		'invoice-item-catalog-updated': 'Charge Catalog Item Updated',
		'invoice-item-catalog-deleted': 'Charge Catalog Item Deleted',
	}),
	topic('invoice', 'Invoice', {
		'invoice-created': 'Invoice Created',
		'invoice-updated': 'Invoice Updated',
	}),
	topic('patient', 'Patient', {
		'patient-created': 'Patient Created',
		'patient-updated': 'Patient Updated',
		'patient-deleted': 'Patient Deleted',
	}),
	topic('waiting-room', 'Telehealth Waiting Room', {
		'patient-joined-twr': 'Patient Joined Waiting Room',
	}),
	topic('consultation-schedule', 'Appointment (Consultation Schedule)', {
		'consultation-schedule-create': 'Appointment Created',
		'consultation-schedule-updated': 'Appointment Updated',
	}),
];

/** An event as the trigger and the action node offer it: unique across topics. */
export interface CatalogEvent {
	/** `<suffix>:<event name>`; the event names `created`/`updated` alone are ambiguous. */
	key: string;
	suffix: string;
	name: string;
	/** "Consultation Finished". */
	label: string;
	/** The name n8n gives a trigger added for this event: "On consultation finished". */
	action: string;
}

export const EVENTS: readonly CatalogEvent[] = TOPICS.flatMap((topic) =>
	topic.events.map((name) => ({
		key: `${topic.suffix}:${name}`,
		suffix: topic.suffix,
		name,
		label: topic.labels[name],
		action: `On ${topic.labels[name].toLowerCase()}`,
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
