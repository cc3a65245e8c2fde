import tsParser from '@typescript-eslint/parser';
import jsoncParser from 'jsonc-eslint-parser';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import { configs as communityConfigs } from '@n8n/eslint-plugin-community-nodes';

const n8nBase = { 'n8n-nodes-base': n8nNodesBase };

export default [
	{
		ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'gulpfile.js', 'jest.config.js', '**/*.js'],
	},
	{
		// n8n's community-package scanner rules: what n8n itself checks before listing a package.
		...communityConfigs.recommended,
		files: ['nodes/**/*.ts', 'credentials/**/*.ts', 'package.json'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module' } },
	},
	{
		files: ['package.json'],
		languageOptions: { parser: jsoncParser },
		plugins: n8nBase,
		rules: { ...n8nNodesBase.configs.community.rules },
	},
	{
		files: ['credentials/**/*.ts'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module' } },
		plugins: n8nBase,
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// Main-repository rule (docs slugs); community credentials link to a full URL instead.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module' } },
		plugins: n8nBase,
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// Both want the literal 'main'; n8n's community scanner requires NodeConnectionTypes.Main.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
	{
		files: ['test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
		languageOptions: { parser: tsParser, parserOptions: { sourceType: 'module' } },
		rules: {},
	},
];
