/**
 * A scripted stand-in for OpenAI's Responses API (POST /responses), as n8n's OpenAI Chat
 * Model node calls it with a custom base URL. The script knows no tool names: it picks
 * tools by their descriptions alone, as a model would, and it keeps every request so a
 * test can read what n8n sent (tool descriptions, tool outputs).
 *
 * The script: find the invoice of the encounter named in the prompt, e-mail that invoice,
 * and answer with what the e-mail tool said (a refusal included).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ModelTool {
	type: string;
	name: string;
	description?: string;
	parameters?: { properties?: Record<string, { type?: string; description?: string }> };
}

interface InputItem {
	type?: string;
	role?: string;
	content?: unknown;
	call_id?: string;
	name?: string;
	arguments?: string;
	output?: unknown;
}

export interface ModelRequest {
	path: string;
	body: { model?: string; stream?: boolean; tools?: ModelTool[]; input?: InputItem[] | string };
}

export interface FakeModel {
	baseUrl: string;
	requests: ModelRequest[];
	close(): Promise<void>;
}

const FIND_INVOICE = /^get the invoice of an encounter/i;
const EMAIL_INVOICE = /^email .*invoice/i;

function textOf(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) return content.map((part) => String((part as { text?: unknown }).text ?? '')).join(' ');
	return '';
}

function outputText(output: unknown): string {
	return typeof output === 'string' ? output : JSON.stringify(output);
}

/** A call to the tool whose description matches, with the number as its first parameter. */
function callTool(tools: ModelTool[], pattern: RegExp, value: string, step: number) {
	const tool = tools.find((candidate) => pattern.test(candidate.description ?? ''));
	if (!tool) return message(`No tool is described as ${String(pattern)}`);
	const [parameter] = Object.keys(tool.parameters?.properties ?? {});
	// As a model does: the value in the type the tool's schema asks for.
	const typed = tool.parameters?.properties?.[parameter]?.type === 'number' ? Number(value) : value;
	return {
		type: 'function_call',
		id: `fc_${step}`,
		call_id: `call_${step}`,
		name: tool.name,
		arguments: JSON.stringify(parameter ? { [parameter]: typed } : {}),
		status: 'completed',
	};
}

function message(text: string) {
	return {
		type: 'message',
		id: `msg_${Date.now()}`,
		role: 'assistant',
		status: 'completed',
		content: [{ type: 'output_text', text, annotations: [] }],
	};
}

/** The next step of the script, read from the conversation so far. */
function nextOutput(body: ModelRequest['body']) {
	const tools = (body.tools ?? []).filter((tool) => tool.type === 'function');
	const input = Array.isArray(body.input) ? body.input : [{ role: 'user', content: body.input ?? '' }];
	const prompt = input.filter((item) => item.role === 'user').map((item) => textOf(item.content)).join(' ');
	const outputs = input.filter((item) => item.type === 'function_call_output').map((item) => outputText(item.output));

	if (outputs.length === 0) {
		const encounter = /encounter\D*(\d+)/i.exec(prompt)?.[1] ?? '1';
		return callTool(tools, FIND_INVOICE, encounter, 1);
	}
	if (outputs.length === 1) {
		const invoiceId = /"id"\s*:\s*(\d+)/.exec(outputs[0])?.[1];
		if (!invoiceId) return message(`The invoice tool gave no invoice: ${outputs[0]}`);
		return callTool(tools, EMAIL_INVOICE, invoiceId, 2);
	}
	return message(`E-mail tool said: ${outputs[1]}`);
}

function responseBody(body: ModelRequest['body']) {
	return {
		id: `resp_${Date.now()}`,
		object: 'response',
		created_at: Math.floor(Date.now() / 1000),
		status: 'completed',
		model: body.model ?? 'fake-model',
		output: [nextOutput(body)],
		parallel_tool_calls: false,
		usage: { input_tokens: 10, output_tokens: 10, total_tokens: 20 },
	};
}

/** Server-sent events for a streamed request: the finished response in one go. */
function streamEvents(response: ReturnType<typeof responseBody>): string {
	const [item] = response.output;
	const events: Array<Record<string, unknown>> = [
		{ type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
		{ type: 'response.output_item.added', output_index: 0, item },
		{ type: 'response.output_item.done', output_index: 0, item },
		{ type: 'response.completed', response },
	];
	return events.map((event, index) => `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`).join('');
}

export async function startFakeModel(): Promise<FakeModel> {
	const requests: ModelRequest[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const path = (req.url ?? '').replace(/\?.*$/, '');
			let body: ModelRequest['body'] = {};
			try {
				body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as ModelRequest['body'];
			} catch {
				body = {};
			}
			requests.push({ path, body });
			if (req.method === 'POST' && path.endsWith('/responses')) {
				const response = responseBody(body);
				if (body.stream) {
					res.writeHead(200, { 'content-type': 'text/event-stream' });
					res.end(streamEvents(response));
				} else {
					res.writeHead(200, { 'content-type': 'application/json' });
					res.end(JSON.stringify(response));
				}
				return;
			}
			res.writeHead(404, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ error: { message: `The fake model serves POST /responses only, not ${req.method ?? ''} ${path}` } }));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		close: async () => await new Promise<void>((resolve) => server.close(() => resolve())),
	};
}
