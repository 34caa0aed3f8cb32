// The app's shell: sign-in, the screens' routes (#/month, #/expenses, …), the navigation,
// the language switch, and the live change feed that refreshes the screen in view.

import { api, asOf, asOfIndex, follow, forgetToken, isHosting, ledger, setAsOf, setLedger, setToken, signIn, signOutMember, signedIn, token } from "./api.js";
import { field, h, replace } from "./dom.js";
import { currentLanguage, moment, setLanguage, t } from "./i18n.js";

// Screen name → its module (loaded when first shown) and navigation label.
const screens = {
  month: { load: () => import("./month.js"), label: "month" },
  expenses: { load: () => import("./expenses.js"), label: "expenses" },
  categories: { load: () => import("./categories.js"), label: "categories" },
  todos: { load: () => import("./todos.js"), label: "todos" },
  recurring: { load: () => import("./recurring.js"), label: "recurring" },
  import: { load: () => import("./import.js"), label: "importNav" },
  history: { load: () => import("./history.js"), label: "history" },
  sync: { load: () => import("./sync.js"), label: "sync" },
  members: { load: () => import("./members.js"), label: "members" },
  accounts: { load: () => import("./accounts.js"), label: "accounts" },
  reports: { load: () => import("./reports.js"), label: "reports" },
  people: { load: () => import("./people.js"), label: "people" },
};

const main = document.getElementById("main");
let session = null;       // GET /v1/session, with canWrite / canReplicate
let shown = null;         // what the current screen's render returned: {refresh, isBusy}
let showing = 0;          // counts renders: a screen drawn for an older one is not put up
let feed = null;          // AbortController of the change feed
let pendingRefresh = false, refreshing = false;

// "#/expenses/2026-11" → {name: "expenses", params: ["2026-11"]}
function route() {
  let parts;
  try { parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent); } catch { parts = []; }
  const [name, ...params] = parts;
  return Object.hasOwn(screens, name ?? "") ? { name, params } : { name: "month", params: [] };
}

export function navigate(hash) {
  if (location.hash === hash) render(); else location.hash = hash;
}

async function render({ focus = false } = {}) {
  const mine = ++showing;
  const stillShown = () => mine === showing;
  translateShell();
  const joining = location.hash.match(/^#\/join\/(?:([a-z0-9-]+)\/)?([0-9a-f]{64})$/);
  if (joining && !signedIn()) return showSignIn(null, { household: joining[1], code: joining[2] });
  if (!signedIn()) return showSignIn();
  if (!session) {
    try {
      session = await api("/v1/session");
    } catch (error) {
      if (error.status === 401) { const message = token() ? t("badToken") : t("signedOut"); forgetToken(); return showSignIn(message); }
      return showFailure(error.message);
    }
    allowWrites();
    session.canReplicate = session.scopes.includes("replicate");
    session.household = ledger();
    showWho();
    // From what the views hold: the feed sends events once they are projected.
    startFeed(session.projectedIndex);
  }
  const { name, params } = route();
  showNavigation(name);
  try {
    const module = await screens[name].load();
    const result = await module.render(main, { params, session, navigate, announce, stillShown });
    if (!stillShown()) return;
    shown = result;
    showAsOf();
  } catch (error) {
    if (!stillShown()) return;
    shown = null;
    // A module that will not load is most likely from a version the service no longer has.
    return showFailure(error.status !== undefined ? error.message : `${error.message}`, error.status === undefined);
  }
  document.title = `${t(screens[name].label)} · Tally`;
  // Rendered, with its handlers attached: what `scripts/bench webapp` times from navigation start.
  document.body.dataset.screen = name;
  performance.mark("tally:screen-ready");
  // A new screen starts at its top, and a screen reader starts reading it there.
  if (focus) { window.scrollTo(0, 0); main.focus({ preventScroll: true }); }
}

// A screen that failed: what happened, and a way on (sign-out stays reachable).
function showFailure(message, offerReload = false) {
  document.getElementById("sign-out").hidden = false;
  replace(main, h("p", { class: "form-error", role: "alert" }, t("screenFailed", { message })),
    h("p", { class: "actions" },
      h("button", { type: "button", onclick: () => (offerReload ? location.reload() : render()) }, offerReload ? t("reload") : t("retry"))));
}

// Writes are offered to a token with the write scope, and never while looking at the past.
function allowWrites() {
  session.canWrite = session.scopes.includes("write") && !asOf();
  session.readOnlyNote = asOf() ? t("asOfReadOnly") : t("readOnly");
}

// The ledger as it was: a banner with the moment shown (and the log index it stood at) and a
// way back; otherwise a folded picker of a past moment (the browser's local time).
function showAsOf() {
  const bar = document.getElementById("as-of");
  bar.hidden = false;
  bar.classList.toggle("past", Boolean(asOf()));
  const choose = (value) => { setAsOf(value); allowWrites(); render(); };
  if (asOf()) {
    replace(bar, h("p", { role: "status" }, t("asOfShowing", { when: moment(asOf()), index: asOfIndex() ?? "?" })),
      h("button", { type: "button", class: "primary", onclick: () => choose(null) }, t("backToNow")));
    return;
  }
  const input = h("input", { id: "as-of-input", type: "datetime-local", step: 1, required: true });
  const error = h("p", { class: "form-error", role: "alert", hidden: true }, t("asOfInvalid"));
  replace(bar, h("details", {}, h("summary", {}, t("asOfOpen")),
    h("form", { class: "as-of-form", onsubmit: (event) => {
      event.preventDefault();
      const when = new Date(input.value);
      if (!input.value || Number.isNaN(when.getTime())) {
        error.hidden = false;
        input.setAttribute("aria-invalid", "true");
        input.focus();
        return;
      }
      choose(when.toISOString());
    } }, field(t("asOfLabel"), input, t("asOfHint")), error, h("button", { type: "submit" }, t("asOfShow")))));
}

// Who is signed in, and to which household (on a hosting server).
function showWho() {
  const who = document.getElementById("who");
  who.hidden = false;
  const name = session.member ? t("signedInAs", { name: session.member, role: t(`role_${session.role}`) }) : t("signedInToken", { name: session.token });
  who.textContent = session.household ? `${name} · ${t("household")} ${session.household}` : name;
}

// Signing in: a member's name and password (and, on a hosting server, the household), or —
// folded away — a program's token. With an invitation's code (`#/join/…`), joining instead:
// the name and password chosen make the new member.
async function showSignIn(message, joining = null) {
  document.getElementById("as-of").hidden = true;
  document.getElementById("nav").hidden = true;
  document.getElementById("sign-out").hidden = true;
  document.getElementById("who").hidden = true;
  document.title = `${t("signIn")} · Tally`;
  const hosting = await isHosting();
  const memberError = h("p", { class: "form-error", role: "alert", hidden: !message }, message ?? "");
  const household = h("input", { id: "household", name: "household", type: "text", autocomplete: "organization", autocapitalize: "off",
    spellcheck: "false", required: true, pattern: "[a-z0-9][a-z0-9\\-]{0,62}", value: joining?.household ?? ledger() ?? "" });
  const name = h("input", { id: "member-name", name: "username", type: "text", autocomplete: "username", required: true, maxlength: 64 });
  const password = h("input", { id: "password", name: "password", type: "password", required: true, minlength: joining ? 10 : 1, maxlength: 200,
    autocomplete: joining ? "new-password" : "current-password" });
  const memberForm = h("form", { class: "card sign-in", id: "member-sign-in", onsubmit: async (event) => {
    event.preventDefault();
    memberError.hidden = true;
    try {
      await signIn({ name: name.value.trim(), password: password.value, household: hosting ? household.value.trim() : null, code: joining?.code });
    } catch (error) {
      memberError.textContent = error.status === 401 ? t("wrongCredentials") : error.status === 429 ? t("slowDown") : error.message;
      memberError.hidden = false;
      password.value = "";
      password.focus();
      return;
    }
    session = null;
    if (joining) location.hash = "";
    await render();
  } }, hosting ? field(t("householdLabel"), household, t("householdHint")) : null, field(t("memberName"), name), field(t("password"), password, joining ? t("newPasswordHint") : null),
  memberError, h("button", { type: "submit", class: "primary" }, joining ? t("join") : t("signIn")));
  // A text field drawn as dots (CSS), not a password field: a browser offers to keep a password
  // in its password manager (and sync it), and the token is meant to live in this tab only.
  const input = h("input", { id: "token", name: "token", type: "text", class: "secret", autocomplete: "off", autocapitalize: "off",
    spellcheck: "false", required: true });
  const error = h("p", { class: "form-error", role: "alert", hidden: true }, "");
  const form = h("form", { class: "card sign-in", onsubmit: async (event) => {
    event.preventDefault();
    const value = input.value.trim();
    // A token is printable ASCII: anything else could not even be sent in a header.
    if (!/^[\x21-\x7e]{1,512}$/.test(value)) {
      error.textContent = t("tokenFormat");
      error.hidden = false;
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    // The household goes into every API path: only a name as the member form takes it.
    if (hosting && !/^[a-z0-9][a-z0-9-]{0,62}$/.test(household.value.trim())) {
      error.textContent = t("householdHint");
      error.hidden = false;
      household.focus();
      return;
    }
    setLedger(hosting ? household.value.trim() : null);
    setToken(value);
    session = null;
    await render();
  } }, field(t("tokenLabel"), input, t("tokenHint")), error, h("button", { type: "submit", class: "primary" }, t("signInWithToken")));
  replace(main, h("h1", {}, joining ? t("joinTitle") : t("signInTitle")), memberForm,
    joining ? null : h("details", { class: "token-sign-in", open: message === t("badToken") }, h("summary", {}, t("useToken")), form));
  (hosting && !household.value ? household : name).focus();
}

async function signOut() {
  feed?.abort();
  feed = null;
  session = null;
  shown = null;
  await signOutMember();
  setAsOf(null);
  document.getElementById("feed-status").hidden = true;
  location.hash = "";
  render();
}

function showNavigation(active) {
  const nav = document.getElementById("nav");
  nav.hidden = false;
  document.getElementById("sign-out").hidden = false;
  replace(nav, h("ul", {}, Object.entries(screens).map(([name, screen]) =>
    h("li", {}, h("a", { href: `#/${name}`, "aria-current": name === active ? "page" : null }, t(screen.label))))));
}

function translateShell() {
  document.documentElement.lang = currentLanguage();
  document.getElementById("skip").textContent = t("skip");
  document.getElementById("language-label").textContent = t("language");
  document.getElementById("language").value = currentLanguage();
  document.getElementById("sign-out").textContent = t("signOut");
  document.getElementById("nav").setAttribute("aria-label", t("screens"));
}

// The change feed: any event (an edit in another browser, by the CLI, or from a peer)
// refreshes the screen in view, unless a form on it is being edited (then after it closes).
function startFeed(after) {
  feed?.abort();
  feed = new AbortController();
  let timer = null;
  const notice = document.getElementById("feed-status");
  follow(after, () => {
    clearTimeout(timer);
    timer = setTimeout(refreshShown, 150);
  }, (state) => {
    notice.hidden = state === "live";
    notice.textContent = state === "limited" ? t("feedLimited") : state === "offline" ? t("feedOffline") : "";
  }, feed.signal);
}

// One refresh at a time: changes arriving during one are taken by one more after it.
async function refreshShown() {
  if (!shown || asOf()) return;  // the past does not change
  if (shown.isBusy?.() || refreshing) { pendingRefresh = true; return; }
  pendingRefresh = false;
  refreshing = true;
  const screen = shown, mine = showing;
  try {
    await (screen.refresh ? screen.refresh() : render());
    if (mine === showing) announce(t("live"));
  } catch {
    // The next change, or the person, tries again.
  } finally {
    refreshing = false;
  }
  if (pendingRefresh) refreshShown();
}

function announce(text) {
  const region = document.getElementById("announce");
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

// A screen whose form closed asks for the refresh it missed.
window.addEventListener("tally:idle", () => { if (pendingRefresh) refreshShown(); });
window.addEventListener("tally:unauthorized", () => {
  if (session) { const message = token() ? t("badToken") : t("signedOut"); session = null; forgetToken(); showSignIn(message); }
});
window.addEventListener("hashchange", () => render({ focus: true }));
document.getElementById("sign-out").addEventListener("click", signOut);
document.getElementById("language").addEventListener("change", (event) => {
  setLanguage(event.target.value);
  if (session) allowWrites();
  render();
});
render();
