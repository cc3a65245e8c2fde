/** What `npm run demo` leaves for `npm run demo:last`: where its n8n is and which workflow to read. */
import { join } from 'node:path';

import { REPO_ROOT } from '../test/e2e/harness';

export const DEMO_DIR = join(REPO_ROOT, '.n8n-demo');
export const DEMO_SESSION_FILE = join(DEMO_DIR, 'session.json');

export interface DemoSession {
	baseUrl: string;
	/** The demo n8n's own API key (a local instance made for the demo, gone at its next start). */
	apiKey: string;
	workflowId: string;
	workflowName: string;
	finishCommand: string;
}
