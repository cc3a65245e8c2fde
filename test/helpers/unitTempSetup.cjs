/**
 * The unit run's temp folder: each test file's n8n user folder goes inside it (test/helpers/n8nEnv.ts), and
 * unitTempTeardown.cjs removes it once every file ran. A test file cannot clean up after itself on exit: the
 * `process` jest gives it never emits 'exit'.
 */
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

module.exports = () => {
	// Set before jest starts its workers, which inherit it.
	process.env.CLINIC_UNIT_TMP = mkdtempSync(join(tmpdir(), 'clinic-unit-'));
};
