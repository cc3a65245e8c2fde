/**
 * How the run's cursor reaches n8n's database. n8n saves static data marked changed with the run: 2.x after
 * storing it and before answering (webhook-helpers.ts, `shouldDeferOnReceivedResponse`), 1.x as it answers; a
 * refused run saves nothing. On the way 2.x wraps the static data again and clears the mark set in webhook()
 * (workflow-runner.ts, `establishContextForPersistence`), so the cursor is set every millisecond until n8n answered.
 */
import { sleep } from 'n8n-workflow';

import type { Cursor } from '../shared/eventCursor';
import type { DeliveryRun } from './newEvents';

/**
 * Resolves with whether n8n stored the run (a 2xx). A service that stops waiting closes the connection, but n8n
 * ends the response all the same (`writableFinished`, without 'finish'). The next delivery tells when the saved cursor is behind.
 */
export async function keepCursorMarkedUntilAnswered(run: Pick<DeliveryRun, 'response' | 'staticData'>, cursor: Cursor): Promise<boolean> {
	const { response, staticData } = run;
	// n8n's static data marks itself changed on any write.
	for (staticData.cursor = cursor; !response.writableFinished; await sleep(1)) staticData.cursor = cursor;
	return response.statusCode >= 200 && response.statusCode < 300;
}
