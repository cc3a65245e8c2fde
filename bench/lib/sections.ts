/**
 * Sections measured in earlier runs, so `--only` replaces some sections of RESULTS.md and
 * keeps the others, each with the date and command that measured it. Kept beside
 * RESULTS.md as `results.json`; without it, the sections are read back from RESULTS.md.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

import type { Goal, SectionResult } from './bench';

export interface StoredSection extends SectionResult {
	id: number;
	/** ISO date the section was measured. */
	measuredAt: string;
	command: string;
}

const GOAL_RESULT: Record<string, boolean | undefined> = { met: true, '**missed**': false, 'not measured': undefined };

/** Sections and goals as the RESULTS.md of an earlier run shows them. */
export function sectionsFromMarkdown(markdown: string): StoredSection[] {
	const command = /^Command: `([^`]*)`/m.exec(markdown)?.[1] ?? 'npm run bench';
	const measuredAt = /^\| Date +\| +([^ |]+) +\|/m.exec(markdown)?.[1] ?? '';
	const goals = new Map<number, Goal[]>();
	for (const line of markdown.split('\n')) {
		const cells = /^\| \((\d+)\) /.test(line) ? line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '').trim()) : [];
		if (cells.length < 3) continue;
		const id = Number(/^\((\d+)\)/.exec(cells[0])![1]);
		const goal = { text: cells[0], met: GOAL_RESULT[cells[1]], detail: cells.slice(2).join(' | ') };
		goals.set(id, [...(goals.get(id) ?? []), goal]);
	}
	return markdown
		.split(/^## (?=\d+\. )/m)
		.slice(1)
		.map((chunk) => {
			const [title, ...body] = chunk.split('\n');
			const markdown = body.join('\n').replace(/^Measured .* with `[^`]*`\.\n\n/, '').trim();
			const id = Number(/^(\d+)\./.exec(title)![1]);
			return { id, title: title.trim(), markdown, goals: goals.get(id) ?? [], measuredAt, command };
		});
}

export function loadSections(jsonFile: string, markdownFile: string): StoredSection[] {
	if (existsSync(jsonFile)) return JSON.parse(readFileSync(jsonFile, 'utf8')) as StoredSection[];
	if (existsSync(markdownFile)) return sectionsFromMarkdown(readFileSync(markdownFile, 'utf8'));
	return [];
}

/** The earlier sections with those of this run put in their place, in section order. */
export function mergeSections(earlier: StoredSection[], now: StoredSection[]): StoredSection[] {
	const byId = new Map(earlier.map((section) => [section.id, section]));
	for (const section of now) byId.set(section.id, section);
	return [...byId.values()].sort((a, b) => a.id - b.id);
}

export function saveSections(jsonFile: string, sections: StoredSection[]): void {
	writeFileSync(jsonFile, `${JSON.stringify(sections, null, '\t')}\n`, 'utf8');
}
