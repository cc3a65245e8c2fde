/**
 * The electronic invoice of a signed invoice, as the two downloads answer it: a
 * small but valid PDF (correct xref offsets) and a CFDI 4.0 XML with its
 * TimbreFiscalDigital 1.1 complement.
 */
import type { ChargeRecord, InvoiceRecord, PersonRecord } from './store';
import { fullName } from './store';

const ISSUER = { rfc: 'CMS150101AB1', name: 'CLINICA MEDICA DEL SUR', regime: '601', zip: '03940' };
const PUBLIC_RFC = 'XAXX010101000';

const pesos = (cents: number): string => (cents / 100).toFixed(2);

function pdfText(text: string): string {
	// WinAnsi-ish: keep Latin-1, escape the string delimiters.
	return text.replace(/[^\x20-\xff]/g, '?').replace(/([\\()])/g, '\\$1');
}

export function cfdiPdf(invoice: InvoiceRecord, person: PersonRecord | undefined, charges: ChargeRecord[]): Buffer {
	const lines = [
		`Factura electronica (CFDI 4.0) - invoice ${invoice.id}`,
		`Folio fiscal (UUID): ${invoice.cfdi_uuid ?? ''}`,
		`Emisor: ${ISSUER.name} (${ISSUER.rfc})`,
		`Receptor: ${person ? fullName(person) : ''}`,
		`Fecha de timbrado: ${invoice.signed_at ?? ''}`,
		...charges.map((c) => `${c.quantity} x ${c.description}: $${pesos(c.subtotal_cents)}`),
		`IVA: $${pesos(invoice.total_tax_cents)}`,
		`Total: $${pesos(invoice.total_cents)} MXN`,
	];
	const content = `BT /F1 11 Tf 14 TL 56 760 Td ${lines.map((l) => `(${pdfText(l)}) Tj T*`).join(' ')} ET`;
	const objects = [
		'<< /Type /Catalog /Pages 2 0 R >>',
		'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
		'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
		`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
		'<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
		`<< /Title (${pdfText(`Factura ${invoice.id}`)}) /Producer (clinic simulator) >>`,
	];
	let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
	const offsets: number[] = [];
	objects.forEach((body, index) => {
		offsets.push(Buffer.byteLength(out, 'latin1'));
		out += `${index + 1} 0 obj\n${body}\nendobj\n`;
	});
	const xref = Buffer.byteLength(out, 'latin1');
	out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
	for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
	out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
	return Buffer.from(out, 'latin1');
}

function attr(value: string | number): string {
	return String(value)
		.replace(/&/g, '&amp;')
		.replace(/</g, '&lt;')
		.replace(/>/g, '&gt;')
		.replace(/"/g, '&quot;');
}

function attrs(values: Record<string, string | number>): string {
	return Object.entries(values)
		.map(([key, value]) => `${key}="${attr(value)}"`)
		.join(' ');
}

export function cfdiXml(invoice: InvoiceRecord, person: PersonRecord | undefined, charges: ChargeRecord[]): Buffer {
	const stamped = (invoice.signed_at ?? new Date().toISOString()).slice(0, 19);
	const subtotal = charges.reduce((sum, c) => sum + c.subtotal_cents, 0);
	const taxed = charges.filter((c) => c.tax_cents > 0);
	const taxedBase = taxed.reduce((sum, c) => sum + c.subtotal_cents, 0);
	const concepts = charges
		.map((c) => {
			const head = attrs({
				ClaveProdServ: c.accounting_type === 'product' ? '51142001' : '85121600',
				NoIdentificacion: String(c.invoice_item_id ?? c.id),
				Cantidad: c.quantity,
				ClaveUnidad: c.accounting_type === 'product' ? 'H87' : 'E48',
				Descripcion: c.description,
				ValorUnitario: c.value.toFixed(2),
				Importe: pesos(c.subtotal_cents),
				ObjetoImp: c.tax_cents > 0 ? '02' : '01',
			});
			if (c.tax_cents === 0) return `<cfdi:Concepto ${head}/>`;
			const transfer = attrs({
				Base: pesos(c.subtotal_cents),
				Impuesto: '002',
				TipoFactor: 'Tasa',
				TasaOCuota: '0.160000',
				Importe: pesos(c.tax_cents),
			});
			return `<cfdi:Concepto ${head}><cfdi:Impuestos><cfdi:Traslados><cfdi:Traslado ${transfer}/></cfdi:Traslados></cfdi:Impuestos></cfdi:Concepto>`;
		})
		.join('');
	const taxes =
		taxed.length === 0
			? ''
			: `<cfdi:Impuestos TotalImpuestosTrasladados="${pesos(invoice.total_tax_cents)}"><cfdi:Traslados><cfdi:Traslado ${attrs(
					{
						Base: pesos(taxedBase),
						Impuesto: '002',
						TipoFactor: 'Tasa',
						TasaOCuota: '0.160000',
						Importe: pesos(invoice.total_tax_cents),
					},
				)}/></cfdi:Traslados></cfdi:Impuestos>`;
	const root = attrs({
		'xmlns:cfdi': 'http://www.sat.gob.mx/cfd/4',
		'xmlns:xsi': 'http://www.w3.org/2001/XMLSchema-instance',
		'xsi:schemaLocation': 'http://www.sat.gob.mx/cfd/4 http://www.sat.gob.mx/sitio_internet/cfd/4/cfdv40.xsd',
		Version: '4.0',
		Serie: 'A',
		Folio: invoice.id,
		Fecha: stamped,
		FormaPago: invoice.tax_attributes.payment_form ?? '01',
		NoCertificado: '30001000000500003416',
		SubTotal: pesos(subtotal),
		Moneda: 'MXN',
		Total: pesos(invoice.total_cents),
		TipoDeComprobante: 'I',
		Exportacion: '01',
		MetodoPago: invoice.tax_attributes.payment_method ?? 'PUE',
		LugarExpedicion: ISSUER.zip,
		Sello: 'U2ltdWxhdGVkIHNlYWwgb2YgdGhlIGlzc3Vlcg==',
		Certificado: 'U2ltdWxhdGVkIGNlcnRpZmljYXRl',
	});
	const receiver = attrs({
		Rfc: PUBLIC_RFC,
		Nombre: person ? fullName(person).toUpperCase() : 'PUBLICO EN GENERAL',
		DomicilioFiscalReceptor: person?.address_zipcode ?? ISSUER.zip,
		RegimenFiscalReceptor: '616',
		UsoCFDI: invoice.tax_attributes.use_cfdi ?? 'S01',
	});
	const stamp = attrs({
		'xmlns:tfd': 'http://www.sat.gob.mx/TimbreFiscalDigital',
		'xsi:schemaLocation':
			'http://www.sat.gob.mx/TimbreFiscalDigital http://www.sat.gob.mx/sitio_internet/cfd/TimbreFiscalDigital/TimbreFiscalDigitalv11.xsd',
		Version: '1.1',
		UUID: invoice.cfdi_uuid ?? '',
		FechaTimbrado: stamped,
		RfcProvCertif: 'SAT970701NN3',
		SelloCFD: 'U2ltdWxhdGVkIHNlYWwgb2YgdGhlIGlzc3Vlcg==',
		NoCertificadoSAT: '30001000000500003456',
		SelloSAT: 'U2ltdWxhdGVkIFNBVCBzZWFs',
	});
	const xml =
		'<?xml version="1.0" encoding="UTF-8"?>\n' +
		`<cfdi:Comprobante ${root}>` +
		`<cfdi:Emisor ${attrs({ Rfc: ISSUER.rfc, Nombre: ISSUER.name, RegimenFiscal: ISSUER.regime })}/>` +
		`<cfdi:Receptor ${receiver}/>` +
		`<cfdi:Conceptos>${concepts}</cfdi:Conceptos>` +
		taxes +
		`<cfdi:Complemento><tfd:TimbreFiscalDigital ${stamp}/></cfdi:Complemento>` +
		'</cfdi:Comprobante>\n';
	return Buffer.from(xml, 'utf8');
}
