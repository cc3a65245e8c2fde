/**
 * Installing into an image or onto workers (docs/queue-mode.md): `npm install` of the
 * packed tarball in a clean folder takes the package alone. The peer n8n-workflow is
 * optional, so npm does not pull it, nor the native isolated-vm that comes with it.
 */
import { execFileSync } from 'child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { nativeModules } from '../e2e/harness/package';

const root = join(__dirname, '..', '..');


describe('installing the package into an image', () => {
	let folder = '';

	beforeAll(() => {
		if (!existsSync(join(root, 'dist', 'nodes', 'Clinic', 'Clinic.node.js'))) {
			throw new Error('dist/ is missing: run `npm run build` before these tests (npm run test:all does)');
		}
		folder = mkdtempSync(join(tmpdir(), 'clinic-image-'));
	});

	afterAll(() => {
		if (folder) rmSync(folder, { recursive: true, force: true });
	});

	it('the command in docs/queue-mode.md takes the package alone: no n8n-workflow, no native module', () => {
		const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', folder], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop()!;
		const nodes = join(folder, 'nodes');
		execFileSync('npm', ['install', '--prefix', nodes, '--no-audit', '--no-fund', join(folder, tarball)], { cwd: folder, encoding: 'utf8' });
		expect(readdirSync(join(nodes, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual(['n8n-nodes-clinic']);
		expect(nativeModules(join(nodes, 'node_modules'))).toEqual([]);
		expect(existsSync(join(nodes, 'node_modules', 'n8n-nodes-clinic', 'dist', 'nodes', 'Clinic', 'Clinic.node.js'))).toBe(true);
	}, 120_000);
});
