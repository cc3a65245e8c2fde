/**
 * Runs a lane's test files in the order `npm run test:all` lists them (E2E_LANE_FILES, file
 * names without folders, space-separated), not in jest's own order (longest first): a lane
 * is planned so that its CPU-heavy files never meet another lane's.
 */
const Sequencer = require('@jest/test-sequencer').default;
const { basename } = require('node:path');

class LaneSequencer extends Sequencer {
	sort(tests) {
		const order = (process.env.E2E_LANE_FILES ?? '').split(/\s+/).filter(Boolean);
		if (order.length === 0) return super.sort(tests);
		const rank = (test) => {
			const index = order.indexOf(basename(test.path));
			return index === -1 ? order.length : index;
		};
		return [...tests].sort((a, b) => rank(a) - rank(b));
	}
}

module.exports = LaneSequencer;
