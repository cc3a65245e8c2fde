/**
 * The two CFDI downloads (PDF and XML) share everything but the format: the request,
 * the file name, the binary output. The request URL carries the access token in its
 * query string (the credential puts it there), so nothing here ever repeats the URL.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ClinicClient } from '../../../shared/transport';
import { readId } from '../common';
import { invoiceIdField } from './fields';

export type CfdiFormat = 'pdf' | 'xml';

const MIME_TYPES: Record<CfdiFormat, string> = { pdf: 'application/pdf', xml: 'application/xml' };

export function downloadProperties(format: CfdiFormat): INodeProperties[] {
	return [
		...invoiceIdField(`to download as ${format.toUpperCase()}; only a signed invoice has a CFDI`),
		{
			displayName: 'Put Output File in Field',
			name: 'binaryPropertyName',
			type: 'string',
			required: true,
			default: 'data',
			hint: 'The name of the output binary field to put the file in',
		},
	];
}

/** A file name from Content-Disposition (`filename*=UTF-8''…` or `filename="…"`), without any path. */
export function fileNameFromDisposition(header: unknown): string | undefined {
	const value = Array.isArray(header) ? String(header[0] ?? '') : String(header ?? '');
	let name: string | undefined;
	const extended = /filename\*\s*=\s*(?:[\w-]+)?'[^']*'([^;]+)/i.exec(value);
	if (extended) {
		try {
			name = decodeURIComponent(extended[1].trim().replace(/^"|"$/g, ''));
		} catch {
			name = undefined;
		}
	}
	if (!name) {
		const plain = /filename\s*=\s*(?:"([^"]*)"|([^;]+))/i.exec(value);
		name = plain ? (plain[1] ?? plain[2]).trim() : undefined;
	}
	if (!name) return undefined;
	const last = name.split(/[\\/]/).pop() ?? '';
	const base = [...last].filter((char) => char.charCodeAt(0) >= 0x20 && char !== '"').join('').trim();
	return base && base !== '.' && base !== '..' ? base : undefined;
}

/**
 * The fiscal folio: the `UUID` attribute of `tfd:TimbreFiscalDigital` (any namespace
 * prefix). Attributes are read one by one from the element's start, so quoted values
 * holding `>` do not end the element early. Undefined when the XML has no stamp.
 */
export function cfdiUuid(xml: string): string | undefined {
	const start = /<(?:[A-Za-z_][\w.-]*:)?TimbreFiscalDigital(?=[\s/>])/.exec(xml);
	if (!start) return undefined;
	const attribute = /\s*([A-Za-z_][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;
	attribute.lastIndex = start.index + start[0].length;
	for (let match = attribute.exec(xml); match; match = attribute.exec(xml)) {
		if (match[1] === 'UUID') return (match[2] ?? match[3]).trim() || undefined;
	}
	return undefined;
}

function toBuffer(body: unknown): Buffer {
	if (Buffer.isBuffer(body)) return body;
	if (body instanceof ArrayBuffer) return Buffer.from(body);
	if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
	if (typeof body === 'string') return Buffer.from(body, 'utf8');
	return Buffer.alloc(0);
}

export async function downloadCfdi(
	ctx: IExecuteFunctions,
	itemIndex: number,
	client: ClinicClient,
	format: CfdiFormat,
): Promise<INodeExecutionData[]> {
	const id = readId(ctx, 'invoiceId', 'Invoice ID', itemIndex);
	const binaryPropertyName = String(ctx.getNodeParameter('binaryPropertyName', itemIndex, 'data') ?? '').trim();
	if (!binaryPropertyName) {
		throw new NodeOperationError(ctx.getNode(), `"Put Output File in Field" is empty in item ${itemIndex + 1}`, {
			itemIndex,
			description: 'Enter the name of the binary field for the file, e.g. data.',
		});
	}

	const response = await client.requestFull(
		{
			method: 'GET',
			path: `/invoices/${encodeURIComponent(id)}/download_cfdi.${format}`,
			auth: 'integration',
			tokenPlacement: 'query',
			binary: true,
			subject: `Invoice ${id}`,
		},
		itemIndex,
	);
	const data = toBuffer(response.body);
	if (data.length === 0) {
		throw new NodeOperationError(ctx.getNode(), `The clinic service sent an empty ${format.toUpperCase()} file for invoice ${id}`, {
			itemIndex,
		});
	}
	const fileName = fileNameFromDisposition(response.headers['content-disposition']) ?? `${id}.${format}`;
	const binary = await ctx.helpers.prepareBinaryData(data, fileName, MIME_TYPES[format]);

	const json: IDataObject = { invoiceId: Number(id), fileName };
	if (format === 'xml' && (ctx.getNodeParameter('extractUuid', itemIndex, true) as boolean)) {
		json.uuid = cfdiUuid(data.toString('utf8')) ?? null;
	}
	return [{ json, binary: { [binaryPropertyName]: binary } }];
}
