import { config as n8nNodeConfig } from '@n8n/node-cli/eslint';

/**
 * n8n's own lint for community packages (`n8n-node lint`, @n8n/node-cli): the scanner's
 * @n8n/community-nodes rules plus n8n-nodes-base's node, credential and package.json rules.
 * `npm run lint` and `npx n8n-node lint` both run this file. Only what ships is linted: the
 * tests, benchmarks and scripts are type-checked (`npm run typecheck`), not held to node rules.
 */
export default [
	{
		ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test/**', 'bench/**', 'scripts/**', '**/*.js', '**/*.mjs'],
	},
	...n8nNodeConfig,
	{
		// n8n's scanner lints with inline config off, so a disable comment would only hide
		// from us what the scanner reports.
		files: ['nodes/**/*.ts', 'credentials/**/*.ts', 'package.json'],
		linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: 'error' },
	},
	{
		// Stricter than n8n-node's defaults: every secret field of a credential is a password field.
		files: ['credentials/**/*.ts'],
		rules: { 'n8n-nodes-base/cred-class-field-type-options-password-missing': 'error' },
	},
];
