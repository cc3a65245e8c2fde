/** What every measurement gets and gives back. */
import { importCredentials, importWorkflows, type CredentialImport, type N8nContext, type WorkflowImport } from './n8n';
import type { Simulator } from './sim';
import { median } from './stats';

export interface BenchOptions {
	/** n8n version, e.g. '2.41.1'. */
	version: string;
	/** Small counts and fewer runs: a smoke test of the benchmark itself. */
	quick: boolean;
	/** Measured runs per variant (a warm-up run comes first and is not counted). */
	runs: number;
	/** Extra environment for every n8n process (`--env`); sections with a context of their own pass it on. */
	env?: Record<string, string>;
}

export interface Bench {
	options: BenchOptions;
	ctx: N8nContext;
	sim: Simulator;
	log(message: string): void;
}

export interface Goal {
	text: string;
	/** undefined: could not be measured. */
	met: boolean | undefined;
	detail: string;
}

export interface SectionResult {
	title: string;
	/** Markdown: tables and notes. */
	markdown: string;
	goals: Goal[];
}

/** One measured run. */
export interface Sample {
	ms: number;
	itemsPerSecond: number;
	tokens?: number;
	peakRss?: number;
	[key: string]: number | undefined;
}

export function medianOf(samples: Sample[], key: keyof Sample): number {
	return median(samples.map((s) => s[key]).filter((v): v is number => typeof v === 'number'));
}

/** Round 0 is the warm-up; rounds 1..runs are measured. */
export function roundLabel(round: number, runs: number): string {
	return round === 0 ? 'warm-up' : `run ${round}/${runs}`;
}

/** Imports credentials and workflows in one n8n boot each. */
export async function importAll(
	bench: Bench,
	credentials: CredentialImport[],
	workflows: WorkflowImport[],
): Promise<void> {
	if (credentials.length > 0) await importCredentials(bench.ctx, credentials);
	if (workflows.length > 0) await importWorkflows(bench.ctx, workflows);
}
