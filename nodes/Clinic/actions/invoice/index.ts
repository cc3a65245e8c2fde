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
				action: 'Download the CFDI of a signed invoice as a PDF file by invoice ID such as 42 as an unsigned invoice has no CFDI',
			},
			{
				name: 'Download XML',
				value: 'downloadXml',
				description: 'Download the CFDI electronic invoice of a signed invoice as an XML file, and read its fiscal UUID',
				action: 'Download the CFDI of a signed invoice as an XML file with its fiscal UUID by invoice ID such as 42 as an unsigned invoice has no CFDI',
			},
			{
				name: 'Email',
				value: 'email',
				description: 'E-mail a signed invoice (CFDI) to the patient',
				action: 'Email the CFDI of a signed invoice to the patient by invoice ID such as 42 as the invoice must be signed first and an unsigned invoice is refused',
			},
			{
				name: 'Get by Encounter',
				value: 'getByEncounter',
				description: 'Get the invoice of an encounter (visit), with totals, tax data and whether it is signed',
				action: 'Get the invoice of an encounter by encounter ID such as 880 with its invoice ID and totals and whether it is signed',
			},
			{
				name: 'Sign',
				value: 'sign',
				description: 'Sign an invoice: stamp its CFDI electronic invoice. Cannot be undone.',
				action: 'Sign an invoice by invoice ID such as 42 which stamps its CFDI for the tax authority and cannot be undone so sign only when the user asks',
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
