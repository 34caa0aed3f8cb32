// The service's API (/v1, docs in /openapi.yaml) as the person signed in: a member of the
// household by the session cookie the service set (HttpOnly: this code never sees it) and the
// CSRF token every write echoes, or a program's token pasted in. Either lives in this tab's
// sessionStorage: gone when the tab is closed, forgotten at sign-out. On a server hosting
// several households, every path is under /v1/ledgers/NAME: `apiPath` turns /v1/… into it.

const TOKEN_KEY = "tally.token";
const CSRF_KEY = "tally.csrf";
const LEDGER_KEY = "tally.ledger";
const AS_OF_KEY = "tally.asOf";

export class ApiError extends Error {
  constructor(status, code, message, field, rows, id) {
    super(message);
    Object.assign(this, { status, code, field, rows, id });
  }
}

export const token = () => sessionStorage.getItem(TOKEN_KEY);
export const setToken = (value) => sessionStorage.setItem(TOKEN_KEY, value);
const csrf = () => sessionStorage.getItem(CSRF_KEY);
// Signed in one way or the other.
export const signedIn = () => Boolean(token() || csrf());
export const forgetToken = () => { sessionStorage.removeItem(TOKEN_KEY); sessionStorage.removeItem(CSRF_KEY); };

// The household on a hosting server (null on a server of one ledger), and the API path of a /v1/… path.
export const ledger = () => sessionStorage.getItem(LEDGER_KEY);
export const setLedger = (name) => (name ? sessionStorage.setItem(LEDGER_KEY, name) : sessionStorage.removeItem(LEDGER_KEY));
const apiPath = (v1Path) => (ledger() ? `/v1/ledgers/${encodeURIComponent(ledger())}${v1Path.slice(3)}` : v1Path);

// Who the request is from: the token, or (a member) the CSRF token a write echoes.
function credentials(method) {
  if (token()) return { Authorization: `Bearer ${token()}` };
  return method === "GET" || method === "HEAD" ? {} : { "X-CSRF-Token": csrf() ?? "" };
}

// Whether this server hosts several households (its /health says how many are open).
export async function isHosting() {
  try { return "openLedgers" in (await (await fetch("/health", { cache: "no-store" })).json()); } catch { return false; }
}

// Signs in as a member (`join`: with an invitation's code); resolves with {member, role}.
export async function signIn({ name, password, household, code }) {
  setLedger(household || null);
  forgetToken();
  const answer = await api(code ? "/v1/invites/accept" : "/v1/session", { method: "POST", body: code ? { code, name, password } : { name, password } });
  sessionStorage.setItem(CSRF_KEY, answer.csrf);
  return answer;
}

// Ends a member's session on the service (the cookie is cleared) and forgets it here.
export async function signOutMember() {
  if (csrf() && !token()) await api("/v1/session", { method: "DELETE" }).catch(() => {});
  forgetToken();
}

// The past moment the ledger's reads answer as of (an ISO date-time), or null for now; kept
// for this tab like the token. The service says which log index it answered for.
export const asOf = () => sessionStorage.getItem(AS_OF_KEY);
export const setAsOf = (moment) => (moment ? sessionStorage.setItem(AS_OF_KEY, moment) : sessionStorage.removeItem(AS_OF_KEY));
let answeredIndex = null;
export const asOfIndex = () => answeredIndex;
// The reads a moment applies to: the ledger's data — not the session, sync status, change feed or files.
const readsThePast = /^\/v1\/(expenses|categories|todos|budgets|recurring|settings|summary|audit|conflicts)(\/|\?|$)/;

// Calls the API; resolves with the JSON answer (null for 204), rejects with an ApiError that
// carries the API's code, message and field. A Blob body is sent as is (an upload).
export async function api(path, { method = "GET", body, headers = {} } = {}) {
  const sent = { ...credentials(method), ...headers };
  let payload = body;
  if (body !== undefined && !(body instanceof Blob)) {
    sent["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  if (method === "GET" && asOf() && readsThePast.test(path)) {
    path += `${path.includes("?") ? "&" : "?"}asOf=${encodeURIComponent(asOf())}`;
  }
  let response;
  try {
    response = await fetch(apiPath(path), { method, headers: sent, body: payload, cache: "no-store", credentials: "same-origin" });
  } catch {
    throw new ApiError(0, "offline", "the service could not be reached");
  }
  if (!response.ok) {
    let error = {};
    try { error = (await response.json()).error ?? {}; } catch { /* not JSON */ }
    if (response.status === 401) window.dispatchEvent(new CustomEvent("tally:unauthorized"));
    throw new ApiError(response.status, error.code ?? `http_${response.status}`, error.message ?? response.statusText, error.field, error.rows, error.id);
  }
  if (response.status === 204) return null;
  const index = response.headers.get("Tally-As-Of-Index");
  if (index !== null) answeredIndex = Number(index);
  return response.json();
}

// Query text from an object, leaving out empty values.
export function query(params) {
  const pairs = Object.entries(params).filter(([, value]) => value !== undefined && value !== null && value !== "");
  // encodeURIComponent, not URLSearchParams: the API reads "+" as a plus sign, not a space.
  return pairs.length ? "?" + pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&") : "";
}

// Follows the change feed (server-sent events) from log index `after`, calling `onChange`
// with each event and `onState` with "live", "limited" (the token holds as many feeds as
// the service allows) or "offline"; reconnects, resuming from the last index seen, until
// `signal` aborts. Read with fetch rather than EventSource, which cannot send the token.
export async function follow(after, onChange, onState, signal) {
  let cursor = after;
  while (!signal.aborted) {
    let retry = 2000;
    try {
      const response = await fetch(apiPath(`/v1/changes?after=${encodeURIComponent(cursor)}`), { headers: credentials("GET"), signal, cache: "no-store", credentials: "same-origin" });
      if (response.status === 401) { window.dispatchEvent(new CustomEvent("tally:unauthorized")); return; }
      if (response.status === 429) { onState("limited"); retry = 15000; throw new Error("too many feeds"); }
      if (!response.ok || !response.body) throw new Error(`change feed: ${response.status}`);
      onState("live");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let id = null, data = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 1);
          if (line === "") {
            if (data !== null) {
              if (id !== null) cursor = id;
              try { onChange(JSON.parse(data)); } catch { /* a malformed event is skipped */ }
            }
            id = data = null;
          } else if (line.startsWith("id: ")) {
            id = line.slice(4);
          } else if (line.startsWith("data: ")) {
            data = line.slice(6);
          }
        }
      }
      onState("offline");
    } catch (error) {
      if (signal.aborted) return;
      if (retry === 2000) onState("offline");
    }
    await new Promise((resolve) => setTimeout(resolve, retry));
  }
}

// An object URL for an attachment's thumbnail (or the file itself), fetched with the token;
// remembered for the page's life, since a digest's bytes never change.
const images = new Map();
export function attachmentURL(digest, { thumbnail = true } = {}) {
  const path = `/v1/attachments/${encodeURIComponent(digest)}${thumbnail ? "/thumbnail?size=256" : ""}`;
  if (!images.has(path)) {
    images.set(path, fetch(apiPath(path), { headers: credentials("GET"), credentials: "same-origin" }).then((response) => {
      if (!response.ok) throw new ApiError(response.status, "attachment", "the attachment could not be loaded");
      return response.blob();
    }).then((blob) => URL.createObjectURL(blob)).catch((error) => { images.delete(path); throw error; }));
  }
  return images.get(path);
}
