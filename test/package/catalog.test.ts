import { EVENTS, TOPICS, describeTopicPrefixProblem, findEvent, fullTopic, splitTopic } from '../../nodes/shared/catalog';

describe('event catalog', () => {
	it('spells the service\'s irregular names exactly', () => {
		expect(findEvent('consultation-schedule:consultation-schedule-create')).toBeDefined();
		expect(findEvent('prescription:prescription-cancel')).toBeDefined();
		expect(findEvent('consultation-schedule:consultation-schedule-created')).toBeUndefined();
	});

	it('gives every event a unique key, though "created" and "updated" repeat across topics', () => {
		expect(new Set(EVENTS.map((event) => event.key)).size).toBe(EVENTS.length);
		expect(EVENTS.filter((event) => event.name === 'created')).toHaveLength(1);
		expect(EVENTS).toHaveLength(TOPICS.reduce((sum, topic) => sum + topic.events.length, 0));
	});

	it('splits a full topic on the longest known suffix', () => {
		expect(splitTopic(fullTopic('clinic-38729', 'invoice-item-catalog'))).toEqual({ prefix: 'clinic-38729', suffix: 'invoice-item-catalog' });
		expect(splitTopic('clinic-38729.invoice-item')).toEqual({ prefix: 'clinic-38729', suffix: 'invoice-item' });
		expect(splitTopic('patient')).toBeUndefined();
	});
});

describe('topic prefix from the credential', () => {
	it.each([
		['', /no Topic Prefix/],
		['clinic-38729.', /ends with a dot.*clinic-38729$/],
		['clinic-38729.patient', /whole topic.*clinic-38729$/],
		['clinic 38729', /spaces/],
	])('refuses %j and says how to fix it', (prefix, message) => {
		expect(describeTopicPrefixProblem(prefix)).toMatch(message);
	});

	it('accepts a prefix as the service assigns it', () => {
		expect(describeTopicPrefixProblem('clinic-38729')).toBeUndefined();
	});
});
