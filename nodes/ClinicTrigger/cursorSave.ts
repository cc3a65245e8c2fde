/**
 * How the run's cursor reaches n8n's database. n8n saves the node's static data with the
 * run it starts, when it is marked changed: 2.x after storing the run and before answering
 * (webhook-helpers.ts, `shouldDeferOnReceivedResponse`), 1.x as it answers. On the way 2.x
 * wraps the static data again (workflow-runner.ts, `establishContextForPersistence`), which
 * clears the changed mark set in webhook(): so the cursor is set again every millisecond
 * until n8n answered. When a refused run is answered, n8n saves nothing.
 */
import { sleep } from 'n8n-workflow';

import type { Cursor } from '../shared/eventCursor';
import type { DeliveryRun } from './newEvents';

/**
 * Sets `cursor` in the static data until n8n answered; resolves with whether it stored the run (a 2xx). A service that
 * stops waiting closes the connection, but n8n goes on and ends the response all the same (Node then sets
 * `writableFinished`, without a 'finish' event). The next delivery tells when the saved cursor is behind (newEvents.ts).
 */
export async function keepCursorMarkedUntilAnswered(run: Pick<DeliveryRun, 'response' | 'staticData'>, cursor: Cursor): Promise<boolean> {
	const { response, staticData } = run;
	// n8n's static data marks itself changed on any write.
	for (staticData.cursor = cursor; !response.writableFinished; await sleep(1)) staticData.cursor = cursor;
	return response.statusCode >= 200 && response.statusCode < 300;
}
