import { readFileSync, readdirSync } from 'fs';
import { join } from 'path';

import { resourceOptions, resources } from '../../nodes/Clinic/actions/resources';
import { WRITES } from '../../nodes/Clinic/actions/writes';
import { TOPICS } from '../../nodes/shared/catalog';

const root = join(__dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** The README and the pages of docs/ it links to: their statements are held to the code alike. */
const docs = readdirSync(join(root, 'docs'))
	.filter((file) => file.endsWith('.md'))
	.map((file) => readFileSync(join(root, 'docs', file), 'utf8'))
	.join('\n');

describe('docs/triggers.md event table', () => {
	const table = docs.slice(docs.indexOf('<!-- events:start -->'), docs.indexOf('<!-- events:end -->'));

	it.each(TOPICS.map((topic) => [topic.suffix, topic]))('lists topic %s with exactly its catalog events', (_suffix, topic) => {
		const row = table.split('\n').find((line) => line.includes(`\`<prefix>.${topic.suffix}\``));
		expect(row).toBeDefined();
		const listed = [...row!.split('|')[3].matchAll(/`([^`]+)`/g)].map((match) => match[1]);
		expect(listed).toEqual([...topic.events]);
		expect(row!.split('|')[4].trim()).toBe(topic.events.map((event) => topic.labels[event]).join(', '));
	});

	it('has one row per catalog topic and no other', () => {
		const rows = table.split('\n').filter((line) => line.includes('`<prefix>.'));
		expect(rows).toHaveLength(TOPICS.length);
	});
});

describe('README commands', () => {
	const scripts = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')).scripts;

	it.each(['demo', 'test:all'])('names npm run %s, which package.json defines', (script) => {
		expect(readme).toContain(`npm run ${script}`);
		expect(scripts[script]).toBeDefined();
	});
});

describe('docs/requests-limits-and-faults.md Parallel Requests table', () => {
	const table = docs.slice(docs.indexOf('<!-- writes:start -->'), docs.indexOf('<!-- writes:end -->'));
	const modes = { parallel: 'in parallel', oneAtATime: 'one at a time' };

	it.each(
		Object.entries(WRITES).flatMap(([resource, operations]) => Object.entries(operations).map(([operation, mode]) => [resource, operation, mode])),
	)('says how %s %s is sent under Automatic', (resource, operation, mode) => {
		const resourceName = resourceOptions.find((option) => option.value === resource)!.name;
		const operationName = (resources as unknown as Record<string, { description: Array<{ name: string; options?: Array<{ name: string; value: unknown }> }> }>)[resource].description
			.find((property) => property.name === 'operation')!
			.options!.find((option) => option.value === operation)!.name;
		const row = table
			.split('\n')
			.find((line) => line.startsWith(`| ${resourceName} → `) && line.split('|')[1].split('→')[1].split('/').map((name) => name.trim()).includes(operationName));
		expect(row).toBeDefined();
		expect(row!.split('|')[2].trim()).toBe(modes[mode as keyof typeof modes]);
	});
});

describe('README and docs', () => {
	it('the README is a five-minute read (at most 250 lines)', () => {
		expect(readme.split('\n').length).toBeLessThanOrEqual(250);
	});

	it('every local link of the README and docs points at a file that exists', () => {
		const pages = [['README.md', readme], ...readdirSync(join(root, 'docs')).filter((file) => file.endsWith('.md')).map((file) => [`docs/${file}`, readFileSync(join(root, 'docs', file), 'utf8')])];
		const missing: string[] = [];
		for (const [page, text] of pages) {
			for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
				if (/^[a-z]+:/.test(target)) continue;
				try {
					readFileSync(join(root, page.includes('/') ? 'docs' : '.', target));
				} catch (error) {
					if ((error as NodeJS.ErrnoException).code === 'EISDIR') continue;
					missing.push(`${page} -> ${target}`);
				}
			}
		}
		expect(missing).toEqual([]);
	});
});
