/**
 * n8n saves static data marked changed with the run: 2.x after storing it, before answering (webhook-helpers.ts), 1.x as
 * it answers; a refused run saves nothing. 2.x wraps the static data again on the way, clearing the mark set in webhook()
 * (workflow-runner.ts, `establishContextForPersistence`), so the cursor is set every millisecond until n8n answered.
 */
import { sleep } from 'n8n-workflow';

import type { Cursor } from '../shared/eventCursor';
import type { DeliveryRun } from './newEvents';

/** Whether n8n stored the run (a 2xx). A closed connection still ends the response (`writableFinished`, without 'finish'). */
export async function keepCursorMarkedUntilAnswered(run: Pick<DeliveryRun, 'response' | 'staticData'>, cursor: Cursor): Promise<boolean> {
	const { response, staticData } = run;
	// n8n's static data marks itself changed on any write.
	for (staticData.cursor = cursor; !response.writableFinished; await sleep(1)) staticData.cursor = cursor;
	return response.statusCode >= 200 && response.statusCode < 300;
}
