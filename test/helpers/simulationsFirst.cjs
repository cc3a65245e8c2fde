/**
 * Jest's order (longest first, as its cache remembers them), but the simulations first: they are the longest
 * files, and without a cache (a fresh clone) jest would start them last, by size, leaving one worker alone.
 */
const Sequencer = require('@jest/test-sequencer').default;

class SimulationsFirst extends Sequencer {
	async sort(tests) {
		const sorted = await super.sort(tests);
		const isSimulation = (test) => test.path.endsWith('simulation.test.ts');
		return [...sorted.filter(isSimulation), ...sorted.filter((test) => !isSimulation(test))];
	}
}

module.exports = SimulationsFirst;
