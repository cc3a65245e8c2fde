/** Polling for a state of n8n or a service, bounded, with a message that says what was awaited. */
import { N8nHarnessError } from './context';

/** Marks an error so that `waitFor` stops polling and throws it. */
export function fatal<E extends Error>(error: E): E & { fatal: true } {
	return Object.assign(error, { fatal: true as const });
}

/** Waits `ms` of wall-clock time. */
export const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every `intervalMs` until it returns a value other than undefined.
 * Errors thrown by `check` are retried, except those with `fatal: true` (see `fatal`).
 */
export async function waitFor<T>(
	what: string,
	check: () => Promise<T | undefined>,
	options: { timeoutMs?: number; intervalMs?: number; onTimeout?: () => string } = {},
): Promise<T> {
	const deadline = Date.now() + (options.timeoutMs ?? 60_000);
	let lastError: unknown;
	for (;;) {
		try {
			const value = await check();
			if (value !== undefined) return value;
		} catch (error) {
			if ((error as { fatal?: boolean }).fatal) throw error;
			lastError = error;
		}
		if (Date.now() > deadline) {
			const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
			throw new N8nHarnessError(`timed out waiting for ${what}${detail}`, options.onTimeout?.());
		}
		await sleep(options.intervalMs ?? 250);
	}
}
