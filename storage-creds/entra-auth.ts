/**
 * Signing in to Microsoft Entra ID as a service principal (OAuth 2.0 client credentials with a
 * client secret), for `adls` profiles with `credentials.type: client-credentials`
 * (docs/storage.md). `@azure/identity`'s `ClientSecretCredential` does the work (MSAL underneath:
 * the tenant's OpenID configuration, the token request, a token cache refreshed before expiry);
 * this file fixes its options and turns its failures into messages an operator acts on.
 *
 * - The authority is the profile's `authority-host` (default `https://login.microsoftonline.com`),
 *   never the process's `AZURE_AUTHORITY_HOST`, so the environment cannot redirect the secret.
 *   Instance discovery is off: the host is the operator's explicit choice (a sovereign cloud, Azure
 *   Stack, a test server), and MSAL's discovery call to the public cloud would refuse hosts it does
 *   not know.
 * - Failures are `EntraSignInError`s: the token endpoint's refusal (`AADSTS7000215: Invalid client
 *   secret provided…`), an unknown tenant (MSAL only says it could not resolve the endpoints, so
 *   the tenant's OpenID configuration is fetched once more to quote Entra's reason), or an
 *   unreachable authority. Messages never hold the secret: Entra's descriptions do not echo it, and
 *   it is scrubbed from them regardless.
 */
import { ClientSecretCredential } from '@azure/identity';
import type { AccessToken, GetTokenOptions, TokenCredential } from '@azure/core-auth';

export const DEFAULT_AUTHORITY_HOST = 'https://login.microsoftonline.com';

/** An Entra ID application (its service principal in the tenant) that signs in with a client secret. */
export interface EntraServicePrincipal {
  /** Directory (tenant) id: a GUID, or a verified domain such as `contoso.onmicrosoft.com`. */
  readonly tenantId: string;
  /** Application (client) id. */
  readonly clientId: string;
  /** Entra ID's host when not the public cloud's (`https://login.microsoftonline.us`, `https://login.chinacloudapi.cn`, Azure Stack, tests). */
  readonly authorityHost: string | null;
}

/** Why no token could be had: Entra ID refused the credentials (or the tenant), or could not be reached. */
export class EntraSignInError extends Error {
  readonly kind = 'entra-sign-in';
  constructor(
    readonly failure: 'refused' | 'unreachable',
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'EntraSignInError';
  }
}

/** The first line of Entra's `error_description`, without the trace ids and timestamp that follow it. */
function entraReason(description: string): string {
  const line = description.split(/\r?\n/).find((l) => l.trim() !== '') ?? description;
  return line.replace(/\s+Trace ID:.*$/, '').trim();
}

function firstLine(text: string): string {
  return (text.split(/\r?\n/).find((l) => l.trim() !== '') ?? text).trim();
}

/** `AADSTS…` reason of an MSAL / identity error message, when it quotes one. */
function aadsts(text: string): string | undefined {
  const m = /AADSTS\d+:[^\r\n]*/.exec(text);
  return m === null ? undefined : entraReason(m[0]);
}

/** A token credential for `principal`, whose failures are `EntraSignInError`s. */
export function entraCredential(principal: EntraServicePrincipal, clientSecret: string): TokenCredential {
  const authorityHost = (principal.authorityHost ?? DEFAULT_AUTHORITY_HOST).replace(/\/+$/, '');
  const inner = new ClientSecretCredential(principal.tenantId, principal.clientId, clientSecret, { authorityHost, disableInstanceDiscovery: true });
  const who = `client ${principal.clientId} of tenant ${principal.tenantId}`;
  const scrub = (text: string): string => text.split(clientSecret).join('[client-secret]');

  /** What the tenant's OpenID configuration endpoint says, when MSAL could not use it. */
  const discoveryFailure = async (): Promise<EntraSignInError> => {
    const url = `${authorityHost}/${encodeURIComponent(principal.tenantId)}/v2.0/.well-known/openid-configuration`;
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      return new EntraSignInError('unreachable', `Entra ID could not be reached at ${authorityHost} (${cause?.code ?? cause?.message ?? (e as Error).message}); check authority-host`);
    }
    const text = await response.text().catch(() => '');
    let description: string | undefined;
    try {
      description = (JSON.parse(text) as { error_description?: unknown }).error_description as string | undefined;
    } catch {
      description = undefined;
    }
    if (response.ok) return new EntraSignInError('refused', `Entra ID at ${authorityHost} published tenant ${principal.tenantId}'s OpenID configuration, but it could not be used`);
    return new EntraSignInError('refused', `Entra ID at ${authorityHost} does not know tenant ${principal.tenantId}: ${typeof description === 'string' ? scrub(entraReason(description)) : `HTTP ${response.status}`}; check tenant-id and authority-host`);
  };

  const explain = async (e: unknown): Promise<EntraSignInError> => {
    const err = e as { name?: string; message?: string; statusCode?: number; errorResponse?: { error?: string; errorDescription?: string } };
    const message = scrub(err.message ?? String(e));
    if (/endpoints_resolution_error|could not resolve endpoints|Endpoints cannot be resolved/i.test(message)) return discoveryFailure();
    const description = err.errorResponse?.errorDescription;
    const reason = (description !== undefined ? aadsts(scrub(description)) : undefined) ?? aadsts(message);
    if (reason !== undefined) return new EntraSignInError('refused', `Entra ID refused the client credentials (${who}): ${reason}`);
    if (err.errorResponse?.error !== undefined && err.errorResponse.error !== 'unknown') {
      return new EntraSignInError('refused', `Entra ID refused the client credentials (${who}): ${err.errorResponse.error}${description !== undefined ? `: ${scrub(firstLine(description))}` : ''}`);
    }
    if (err.statusCode === undefined && /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|network|certificate|self.signed|socket/i.test(message)) {
      return new EntraSignInError('unreachable', `Entra ID could not be reached at ${authorityHost}: ${firstLine(message)}`);
    }
    return new EntraSignInError('refused', `signing in to Entra ID (${who}) failed: ${firstLine(message)}`);
  };

  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
      try {
        return await inner.getToken(scopes, options);
      } catch (e) {
        throw await explain(e);
      }
    },
  };
}
