import type { INodeProperties } from 'n8n-workflow';

import * as downloadPdf from './downloadPdf.operation';
import * as downloadXml from './downloadXml.operation';
import * as email from './email.operation';
import * as getByEncounter from './getByEncounter.operation';
import * as sign from './sign.operation';

export const operations = { downloadPdf, downloadXml, email, getByEncounter, sign };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['invoice'] } },
		options: [
			{
				name: 'Download PDF',
				value: 'downloadPdf',
				description: 'Download the CFDI electronic invoice of a signed invoice as a PDF file',
				action: 'Download an invoice as PDF',
			},
			{
				name: 'Download XML',
				value: 'downloadXml',
				description: 'Download the CFDI electronic invoice of a signed invoice as an XML file, and read its fiscal UUID',
				action: 'Download an invoice as XML',
			},
			{
				name: 'Email',
				value: 'email',
				description: 'E-mail a signed invoice (CFDI) to the patient',
				action: 'Email an invoice',
			},
			{
				name: 'Get by Encounter',
				value: 'getByEncounter',
				description: 'Get the invoice of an encounter (visit), with totals, tax data and whether it is signed',
				action: 'Get the invoice of an encounter',
			},
			{
				name: 'Sign',
				value: 'sign',
				description: 'Sign an invoice: stamp its CFDI electronic invoice. Cannot be undone.',
				action: 'Sign an invoice',
			},
		],
		default: 'getByEncounter',
	},
	...downloadPdf.description,
	...downloadXml.description,
	...email.description,
	...getByEncounter.description,
	...sign.description,
];
