/** Two projects: `unit` (unit and simulator-backed tests, seconds) and `e2e` (real n8n, minutes). */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

module.exports = {
	// Bounds a hang only: no verdict depends on how fast the machine is (e2e tests set their own).
	testTimeout: 60_000,
	// A run ends once its tests have: a handle a test left open is named, not waited on.
	// CPU per test file (with N8N_E2E_CPU_LOG): where an end-to-end run spends the machine.
	reporters: ['default', '<rootDir>/test/helpers/exitGuard.cjs', '<rootDir>/test/helpers/cpuReport.cjs'],
	// The end-to-end lanes give their own (test/e2e/harness/laneSequencer.cjs).
	testSequencer: '<rootDir>/test/helpers/simulationsFirst.cjs',
	projects: [
		{
			displayName: 'unit',
			testEnvironment: 'node',
			transform: { '^.+\\.ts$': tsJest },
			testMatch: ['<rootDir>/test/**/*.test.ts'],
			testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
			// One temp folder for the run's n8n user folders, removed at its end.
			globalSetup: '<rootDir>/test/helpers/unitTempSetup.cjs',
			globalTeardown: '<rootDir>/test/helpers/unitTempTeardown.cjs',
		},
		{
			displayName: 'e2e',
			testEnvironment: 'node',
			transform: { '^.+\\.ts$': tsJest },
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
			// Installs every tested n8n version in parallel before the first test file (cached).
			globalSetup: '<rootDir>/test/e2e/harness/globalSetup.ts',
			// Stops the n8n a lane's files shared (test/e2e/harness/laneServer.ts).
			globalTeardown: '<rootDir>/test/e2e/harness/globalTeardown.ts',
		},
	],
};
