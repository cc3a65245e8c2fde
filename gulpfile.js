const { rmSync } = require('fs');
const path = require('path');
const { task, src, dest, parallel } = require('gulp');

// n8n loads icons and the codex (.node.json) from next to the compiled .js files.
function copyNodeIcons() {
	return src(path.resolve('nodes', '**', '*.{png,svg,node.json}'), { encoding: false }).pipe(
		dest(path.resolve('dist', 'nodes')),
	);
}

// n8n reads output schemas from <node folder>/__schema__/v<version>/<resource>/<operation>.json.
function copyOutputSchemas() {
	return src(path.resolve('nodes', '**', '__schema__', '**', '*.json')).pipe(dest(path.resolve('dist', 'nodes')));
}

function copyCredentialIcons() {
	return src(path.resolve('credentials', '**', '*.{png,svg}'), { encoding: false }).pipe(
		dest(path.resolve('dist', 'credentials')),
	);
}

task('build:icons', parallel(copyNodeIcons, copyOutputSchemas, copyCredentialIcons));

// `npm run build` starts from an empty dist/, so nothing an earlier build left there (a renamed
// node, a deleted credential) can reach a tarball.
task('clean', (done) => {
	rmSync(path.resolve('dist'), { recursive: true, force: true });
	done();
});
