/**
 * Record ids as resource locators: "From List" where the service can list the records,
 * "By ID", and "By URL" where a `links` address of another record names this one
 * (a consultation's `links.person` is `…/people/2048`). Saved workflows from before
 * the locators hold a plain id; readId in common.ts accepts both.
 */
import type { INodeProperties } from 'n8n-workflow';

export interface LocatorOptions {
	displayName: string;
	name: string;
	description: string;
	placeholder: string;
	/** The path segment before the id in a link, e.g. `people` for `…/people/2048`. */
	urlSegment?: string;
	/** Name of a `methods.listSearch` function of the node. */
	searchList?: string;
}

/**
 * A link with the segment followed by the id: `https://host/api/v1/consultations/1024`,
 * `/api/v1/consultations/1024/prescriptions` (the service's links may leave out the host).
 */
export function linkPattern(segment: string): string {
	return `^[^\\s]*?/${segment}/([1-9][0-9]*)(?:[/?#][^\\s]*)?$`;
}

/**
 * The id field, twice: a resource locator in the Clinic node, and in the Clinic tool (an AI
 * agent's or MCP server's) a number the model fills in. n8n's editor writes a tool field's
 * `$fromAI` with the field's type and no description (a locator gives 'string'), and n8n
 * refuses a model's number against 'string' before the node runs; this default already says
 * 'number' and what an id looks like. A user may still type a fixed id instead.
 */
export function idLocator(options: LocatorOptions): INodeProperties[] {
	return [
		{ ...locator(options), displayOptions: { hide: { '@tool': [true] } } },
		{
			displayName: options.displayName,
			name: options.name,
			type: 'number',
			required: true,
			default: fromAI(options),
			description: options.description,
			displayOptions: { show: { '@tool': [true] } },
		},
	];
}

/** The expression n8n's "let the model define this parameter" button writes, typed and described. */
function fromAI({ displayName, placeholder }: LocatorOptions): string {
	const key = displayName.replace(/[^a-zA-Z0-9]/g, '_');
	const description = `The ${displayName.replace(/ ID$/, '').toLowerCase()} ID, a whole number such as ${placeholder}`;
	return `={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('${key}', \`${description}\`, 'number') }}`;
}

function locator(options: LocatorOptions): INodeProperties {
	const { searchList, urlSegment } = options;
	const kind = options.displayName.replace(/ ID$/, '').toLowerCase();
	return {
		displayName: options.displayName,
		name: options.name,
		type: 'resourceLocator',
		required: true,
		default: { mode: searchList ? 'list' : 'id', value: '' },
		description: options.description,
		modes: [
			...(searchList
				? [
						{
							displayName: 'From List',
							name: 'list',
							type: 'list' as const,
							typeOptions: { searchListMethod: searchList, searchable: true },
						},
					]
				: []),
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: options.placeholder,
				validation: [
					{ type: 'regex', properties: { regex: '^[1-9][0-9]*$', errorMessage: 'An ID is a whole number such as 42' } },
				],
			},
			...(urlSegment
				? [
						{
							displayName: 'By URL',
							name: 'url',
							type: 'string' as const,
							placeholder: `https://api.your-clinic-service.com/api/v1/${urlSegment}/${options.placeholder}`,
							hint: 'A link to the record, e.g. from the links of a consultation or an invoice',
							validation: [
								{
									type: 'regex' as const,
									properties: {
										regex: linkPattern(urlSegment),
										errorMessage: `Not a link to a ${kind}: it must contain /${urlSegment}/ and the number`,
									},
								},
							],
							extractValue: { type: 'regex' as const, regex: linkPattern(urlSegment) },
						},
					]
				: []),
		],
	};
}
