/**
 * Where the integration token travels. The transport decides per request (the service's
 * rule, nodes/shared/transport.ts) and says so in a header that `authenticate` removes.
 */
import type { ICredentialDataDecryptedObject, IDataObject, IHttpRequestOptions } from 'n8n-workflow';

export const DEFAULT_CFDI_QUERY_PARAMETER = 'token';

/**
 * The header by which the transport tells `authenticate` where a request carries the
 * token. It is removed here and never sent. Without it (n8n's own credential test request) the token goes in the
 * Authorization header.
 */
export const TOKEN_PLACEMENT_HEADER = 'x-clinic-token-placement';

export type TokenPlacement = 'header' | 'body' | 'query';

/** Puts the access token where the transport said; the one place that writes it. */
export function placeIntegrationToken(
	credentials: ICredentialDataDecryptedObject,
	requestOptions: IHttpRequestOptions,
): IHttpRequestOptions {
	const token = String(credentials.accessToken ?? '');
	const headers = { ...(requestOptions.headers ?? {}) };
	let placement: TokenPlacement = 'header';
	for (const name of Object.keys(headers)) {
		const lower = name.toLowerCase();
		if (lower === TOKEN_PLACEMENT_HEADER) placement = String(headers[name]) as TokenPlacement;
		if (lower === TOKEN_PLACEMENT_HEADER || lower === 'authorization') delete headers[name];
	}
	if (placement === 'body') {
		const body = (requestOptions.body && typeof requestOptions.body === 'object' ? requestOptions.body : {}) as IDataObject;
		return { ...requestOptions, headers, body: { ...body, service_access_token: token } };
	}
	if (placement === 'query') {
		const parameter = String(credentials.cfdiQueryParameter || DEFAULT_CFDI_QUERY_PARAMETER);
		return { ...requestOptions, headers, qs: { ...(requestOptions.qs ?? {}), [parameter]: token } };
	}
	return { ...requestOptions, headers: { ...headers, Authorization: `Bearer ${token}` } };
}
