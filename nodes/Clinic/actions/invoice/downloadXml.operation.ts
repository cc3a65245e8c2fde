import { updateDisplayOptions } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { downloadCfdi, downloadProperties } from './cfdiDownload';

export const description = updateDisplayOptions({ show: { resource: ['invoice'], operation: ['downloadXml'] } }, [
	...downloadProperties('xml'),
	{
		displayName: 'Extract CFDI UUID',
		name: 'extractUuid',
		type: 'boolean',
		default: true,
		description:
			'Whether to read the fiscal folio (UUID of the TimbreFiscalDigital stamp) from the XML and output it as uuid in the JSON, next to invoiceId and fileName',
	},
]);

export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
): Promise<INodeExecutionData[]> {
	return await downloadCfdi(this, itemIndex, client, 'xml');
}
