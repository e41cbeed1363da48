/**
 * A small in-memory OAuth client provider for a client registered in advance that holds a token.
 *
 * @module
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { checkKnownOptions, type KnownOptions } from './options.js';

/** Options of {@link McpOAuthTokenProvider}. */
export interface McpOAuthTokenProviderOptions {
  /** The client's id at the authorization server (registered in advance; nothing is registered). */
  readonly clientId: string;
  /** The client's secret, if it has one (sent to the token endpoint as the server asks: basic or post). */
  readonly clientSecret?: string;
  /** The tokens to start with: an access token, and a refresh token to renew it. */
  readonly tokens: OAuthTokens;
  /** The scope asked for (default: what the server's metadata lists). */
  readonly scope?: string;
  /** Told of every new set of tokens (to store them); a throw fails the refresh. */
  readonly onTokens?: (tokens: OAuthTokens) => void;
}

const OPTIONS: KnownOptions<McpOAuthTokenProviderOptions> = { clientId: true, clientSecret: true, tokens: true, scope: true, onTokens: true };

/**
 * An `OAuthClientProvider` (the SDK's interface, for `authProvider` of an http server) that keeps a
 * pre-registered client and its tokens in memory. The transport sends the access token; when the
 * server answers `401`, the SDK's `auth` flow finds the authorization server (from the server's
 * protected-resource metadata) and asks its token endpoint for new tokens with the refresh token
 * (`grant_type=refresh_token`, a non-interactive flow: nothing opens a browser), then sends the
 * request again. Without a refresh token, or if the authorization server refuses it, the toolset
 * fails with an `McpAuthorizationError`.
 *
 * Tokens live in this object only (`onTokens` is told of new ones); one provider serves one
 * server's connections (a reconnect reuses the latest token).
 *
 * @throws TypeError for an option it does not know, or without a `clientId` or an access token.
 */
export class McpOAuthTokenProvider implements OAuthClientProvider {
  readonly #options: McpOAuthTokenProviderOptions;
  #tokens: OAuthTokens;
  #client: OAuthClientInformationMixed;

  constructor(options: McpOAuthTokenProviderOptions) {
    checkKnownOptions('McpOAuthTokenProvider', options, OPTIONS);
    if (typeof options.clientId !== 'string' || options.clientId === '') throw new TypeError('McpOAuthTokenProvider: clientId must be a non-empty string');
    if (typeof options.tokens?.access_token !== 'string') throw new TypeError('McpOAuthTokenProvider: tokens.access_token must be a string');
    this.#options = options;
    this.#tokens = { ...options.tokens };
    this.#client = { client_id: options.clientId, ...(options.clientSecret === undefined ? {} : { client_secret: options.clientSecret }) };
  }

  /** No redirect: this provider never starts an interactive authorization. */
  get redirectUrl(): undefined {
    return undefined;
  }

  /** The client's metadata (only its grant types and scope matter here). */
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'kosong',
      redirect_uris: [],
      grant_types: ['refresh_token'],
      token_endpoint_auth_method: this.#options.clientSecret === undefined ? 'none' : 'client_secret_basic',
      ...(this.#options.scope === undefined ? {} : { scope: this.#options.scope }),
    };
  }

  /** The pre-registered client. */
  clientInformation(): OAuthClientInformationMixed {
    return this.#client;
  }

  /** Keeps what the SDK stamps on the client (its issuer). */
  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.#client = information;
  }

  /** The current tokens. */
  tokens(): OAuthTokens {
    return this.#tokens;
  }

  /** Keeps new tokens (a refresh that returns no new refresh token keeps the old one). */
  saveTokens(tokens: OAuthTokens): void {
    const refreshToken = tokens.refresh_token ?? this.#tokens.refresh_token;
    const next: OAuthTokens = refreshToken === undefined ? { ...tokens } : { ...tokens, refresh_token: refreshToken };
    this.#options.onTokens?.(next);
    this.#tokens = next;
  }

  /** The token request of the non-interactive flow: a refresh with the refresh token. */
  prepareTokenRequest(): URLSearchParams {
    const refreshToken = this.#tokens.refresh_token;
    if (refreshToken === undefined) throw new Error('the access token was refused and there is no refresh token to renew it');
    const params = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken });
    if (this.#options.scope !== undefined) params.set('scope', this.#options.scope);
    return params;
  }

  /** Never called (no redirect URL); refuses, naming why. */
  redirectToAuthorization(): never {
    throw new Error('McpOAuthTokenProvider cannot run an interactive authorization');
  }

  /** Never called (no redirect URL). */
  saveCodeVerifier(): void {}

  /** Never called (no redirect URL); refuses. */
  codeVerifier(): never {
    throw new Error('McpOAuthTokenProvider has no PKCE code verifier (no interactive authorization)');
  }
}
