/**
 * How a request without an answer is recognised, whatever shape n8n hands the failure in:
 * 2.x passes the client's error on (code, cause), 1.x wraps it in a NodeApiError that keeps
 * the code only as its httpCode. Words and timeouts follow from the code, never a message.
 */
import { networkFailureWords } from '../../credentials/ClinicNetwork';
import { isTimeout, networkCode } from '../../nodes/shared/errors';

describe('networkCode', () => {
	it('reads the code of the client error (2.x) and through causes', () => {
		expect(networkCode({ code: 'ECONNRESET', message: 'socket hang up' })).toBe('ECONNRESET');
		expect(networkCode({ message: 'wrapped', cause: { message: 'inner', cause: { code: 'ETIMEDOUT' } } })).toBe('ETIMEDOUT');
	});

	it('reads the code 1.x keeps only as the wrapper httpCode; a numeric httpCode is no network code', () => {
		expect(networkCode({ name: 'NodeApiError', message: 'socket hang up', httpCode: 'ECONNRESET' })).toBe('ECONNRESET');
		expect(networkCode({ name: 'NodeApiError', message: 'timeout of 3000ms exceeded', httpCode: 'ECONNABORTED' })).toBe('ECONNABORTED');
		expect(networkCode({ name: 'NodeApiError', message: 'Service unavailable', httpCode: '503' })).toBeUndefined();
	});

	it('prefers a code it has words for over a generic one', () => {
		expect(networkCode({ code: 'ERR_BAD_RESPONSE', cause: { code: 'ECONNREFUSED' } })).toBe('ECONNREFUSED');
	});

	it('a timeout is told by its code, and a reset reads "the connection was closed"', () => {
		expect(isTimeout(networkCode({ httpCode: 'ECONNABORTED' }))).toBe(true);
		expect(isTimeout(networkCode({ code: 'ECONNRESET' }))).toBe(false);
		expect(networkFailureWords(networkCode({ httpCode: 'ECONNRESET' }))).toBe('the connection was closed');
	});
});
