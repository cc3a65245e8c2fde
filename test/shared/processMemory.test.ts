/**
 * Every store the package keeps in an n8n process between executions is in one list,
 * with what bounds it, and one call empties them all.
 */
import { forgetProcessMemory, processStores } from '../../credentials/ClinicProcessMemory';
// Loading the nodes and credentials registers their stores, as n8n's loading does.
import '../../nodes/Clinic/Clinic.node';
import '../../nodes/ClinicTrigger/ClinicTrigger.node';
import '../../nodes/ClinicEventLogTrigger/ClinicEventLogTrigger.node';
import '../../credentials/ClinicApi.credentials';
import '../../credentials/ClinicRefreshTokenApi.credentials';
import { limiterFor } from '../../nodes/shared/hostLimiter';

describe('process memory', () => {
	it('lists every store with its bound', () => {
		const stores = processStores();
		expect(stores.map((store) => store.name).sort()).toEqual(
			[
				'host limiters',
				'newest refresh token of each chain',
				'pending sign-ins',
				'refused refresh tokens',
				'the memory of each Clinic Trigger',
			].sort(),
		);
		for (const store of stores) expect(store.bound).toMatch(/\d|one per/);
	});

	it('one call empties them all: a host limiter is new afterwards', () => {
		const before = limiterFor('api.example.test');
		expect(limiterFor('api.example.test')).toBe(before);
		forgetProcessMemory();
		expect(limiterFor('api.example.test')).not.toBe(before);
	});
});
