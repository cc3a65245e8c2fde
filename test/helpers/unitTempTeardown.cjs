/** Removes the unit run's temp folder (test/helpers/unitTempSetup.cjs). */
const { rmSync } = require('node:fs');

module.exports = () => {
	if (process.env.CLINIC_UNIT_TMP) rmSync(process.env.CLINIC_UNIT_TMP, { recursive: true, force: true, maxRetries: 3 });
};
