import { execFileSync } from 'child_process';
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';

const root = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('the published package', () => {
	beforeAll(() => {
		if (!existsSync(join(root, 'dist', 'nodes', 'Clinic', 'Clinic.node.js'))) {
			throw new Error('dist/ is missing: run `npm run build` before these tests (npm run test:all does)');
		}
	});

	const packedFiles = (): string[] => {
		const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
		return (JSON.parse(output)[0].files as Array<{ path: string }>).map((file) => file.path);
	};

	it('holds every node and credential n8n loads, with its codex and icons', () => {
		const files = packedFiles();
		for (const entry of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) expect(files).toContain(entry);
		for (const node of ['Clinic', 'ClinicTrigger']) {
			expect(files).toContain(`dist/nodes/${node}/${node}.node.json`);
			expect(files).toContain(`dist/nodes/${node}/clinic.svg`);
			expect(files).toContain(`dist/nodes/${node}/clinic.dark.svg`);
		}
		expect(files).toContain('dist/credentials/clinic.svg');
	});

	it('holds no source, tests or tooling', () => {
		const stray = packedFiles().filter(
			(file) => !file.startsWith('dist/') && !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(file),
		);
		expect(stray).toEqual([]);
		expect(packedFiles().filter((file) => file.endsWith('.ts') || file.includes('test'))).toEqual([]);
	});

	it('names no entry point the tarball lacks (n8n loads the files under n8n.nodes and n8n.credentials)', () => {
		const files = packedFiles();
		for (const field of ['main', 'module', 'types', 'exports', 'bin']) {
			const value = manifest[field];
			if (value === undefined) continue;
			const paths = typeof value === 'string' ? [value] : (JSON.stringify(value).match(/"\.?\/?[^"]+\.(?:c?js|d\.ts)"/g) ?? []).map((p) => JSON.parse(p) as string);
			for (const path of paths) expect(files).toContain(path.replace(/^\.\//, ''));
		}
	});

	it('declares no runtime dependencies and n8n-workflow as a peer', () => {
		expect(manifest.dependencies ?? {}).toEqual({});
		expect(manifest.peerDependencies).toEqual({ 'n8n-workflow': '*' });
		// Optional: npm in an image would otherwise install it, and the native isolated-vm with it.
		expect(manifest.peerDependenciesMeta).toEqual({ 'n8n-workflow': { optional: true } });
		expect(manifest.keywords).toContain('n8n-community-node-package');
		expect(manifest.n8n.n8nNodesApiVersion).toBe(1);
	});
});
