import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { downloadCfdi, downloadProperties } from './cfdiDownload';

export const description = updateDisplayOptions(
	{ show: { resource: ['invoice'], operation: ['downloadPdf'] } },
	downloadProperties('pdf'),
);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	return await downloadCfdi(this, itemIndex, client, 'pdf');
}
