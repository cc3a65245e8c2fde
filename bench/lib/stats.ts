/** Medians, rounding and Markdown tables for the benchmark reports. */

export function median(values: number[]): number {
	const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
	if (finite.length === 0) return Number.NaN;
	const middle = Math.floor(finite.length / 2);
	return finite.length % 2 === 1 ? finite[middle] : (finite[middle - 1] + finite[middle]) / 2;
}

export function sum(values: number[]): number {
	return values.reduce((total, v) => total + v, 0);
}

/** A number for a table: '-' when missing, thousands without separators, at most `digits` decimals. */
export function fmt(value: number | undefined, digits = 0): string {
	if (value === undefined || !Number.isFinite(value)) return '-';
	return value.toFixed(digits);
}

export function mib(bytes: number | undefined): string {
	if (bytes === undefined || !Number.isFinite(bytes)) return '-';
	return (bytes / (1024 * 1024)).toFixed(0);
}

/** A difference in MiB with its sign: "+42", "-3". */
export function signedMib(bytes: number | undefined): string {
	if (bytes === undefined || !Number.isFinite(bytes)) return '-';
	const value = Math.round(bytes / (1024 * 1024));
	return value > 0 ? `+${value}` : String(value === 0 ? 0 : value);
}

/** "1.23x" */
export function ratio(a: number | undefined, b: number | undefined): string {
	if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '-';
	return `${(a / b).toFixed(2)}x`;
}

/** Items (or requests) per second from a count and milliseconds. */
export function perSecond(count: number, ms: number): number {
	return ms > 0 ? (count * 1000) / ms : Number.NaN;
}

/** A GitHub Markdown table; columns after the first are right-aligned. */
export function table(header: string[], rows: string[][]): string {
	const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
	const line = (cells: string[]) =>
		`| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
	const rule = `|${widths.map((w, i) => (i === 0 ? `${'-'.repeat(w + 2)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
	return [line(header), rule, ...rows.map(line)].join('\n');
}

/** `n` values, joined for a "runs" column: "512, 530, 498". */
export function runsList(values: number[], digits = 0): string {
	return values.map((v) => fmt(v, digits)).join(', ');
}
