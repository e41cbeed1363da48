
/** The statuses `fetch` follows as redirects. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** As many redirects as the Fetch standard follows before it gives up. */
const MAX_REDIRECTS = 20;

/** Request headers that describe the body, dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/**
 * A `fetch` that follows redirects only within the origin (scheme, host and port) of the request, so
 * that the credentials an API request carries (`Authorization`, `x-api-key`, `x-goog-api-key`,
 * credential-like default headers) never reach another host. `fetch` itself keeps every header but
 * `Authorization` and cookies on a redirect to another origin.
 *
 * Each request goes out with `redirect: 'manual'`. A redirect to the same origin is followed as
 * `fetch` follows it (a 303, and a 301 or 302 of a POST, become a GET without the body; a 307 or 308
 * keeps the method and body), up to 20 times. A redirect to another origin is not followed: its
 * response (the 3xx status with its `location`) is returned as it is, so the request fails with that
 * status ({@link redirectRefusal} says why). A request whose own `redirect` is `manual` or `error`
 * is sent as it is.
 */
export function sameOriginRedirects(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    if (init?.redirect === 'manual' || init?.redirect === 'error') return fetchImpl(input, init);
    // A Request object carries its body itself: sent once, without following any redirect.
    if (input instanceof Request) return fetchImpl(input, { ...init, redirect: 'manual' });
    let url = new URL(input);
    let request: RequestInit = { ...init, redirect: 'manual' };
    for (let redirects = 0; ; redirects++) {
      const response = await fetchImpl(url.href, request);
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) return response;
      const target = URL.canParse(location, url.href) ? new URL(location, url) : undefined;
      if (target === undefined || target.origin !== url.origin) return response;
      const next = redirectedRequest(request, response.status);
      if (next === undefined) return response;
      if (redirects === MAX_REDIRECTS) throw new TypeError(`fetch failed: more than ${MAX_REDIRECTS} redirects`);
      await response.body?.cancel().catch(() => undefined);
      url = target;
      request = next;
    }
  };
}

/** The request to send to a redirect's location, as `fetch` would; `undefined` when its body cannot be sent again. */
function redirectedRequest(request: RequestInit, status: number): RequestInit | undefined {
  const method = (request.method ?? 'GET').toUpperCase();
  if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
    const headers = new Headers(request.headers);
    for (const name of BODY_HEADERS) headers.delete(name);
    return { ...request, method: 'GET', body: null, headers };
  }
  return request.body instanceof ReadableStream ? undefined : request;
}

/**
 * What an error says of a response that is a redirect not followed ({@link sameOriginRedirects}): the
 * status, where it led and why it was not followed; `undefined` for any other response.
 */
export function redirectRefusal(status: number, headers: Pick<Headers, 'get'> | undefined): string | undefined {
  const location = REDIRECT_STATUSES.has(status) ? headers?.get('location') : undefined;
  if (location === undefined || location === null) return undefined;
  return (
    `The server answered HTTP ${status}, a redirect to ${JSON.stringify(location)}, which is not followed: ` +
    'a redirect to another origin than the base URL would take the credentials there. If the API is at that address, make it the base URL.'
  );
}
