import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
const dir = mkdtempSync(join(tmpdir(), 'clinic-n8n-'));
process.env.N8N_USER_FOLDER = dir;
process.env.N8N_BINARY_DATA_STORAGE_PATH = join(dir, 'binary');
import { Container } from '@n8n/di';
import { BinaryDataService, ExecuteContext } from 'n8n-core';
import { Workflow } from 'n8n-workflow';
(async () => {
	const svc = Container.get(BinaryDataService);
	await svc.init();
	console.log('ok', (svc as any).mode);
	const http = await import('@n8n/backend-network');
	console.log(Object.keys(http));
	void ExecuteContext; void Workflow;
})().catch((e) => { console.error('ERR', e); });
