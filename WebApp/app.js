// The app's shell: sign-in, the screens' routes (#/month, #/expenses, …), the navigation,
// the language switch, and the live change feed that refreshes the screen in view.

import { api, follow, forgetToken, setToken, token } from "./api.js";
import { field, h, replace } from "./dom.js";
import { currentLanguage, setLanguage, t } from "./i18n.js";

// Screen name → its module (loaded when first shown) and navigation label.
const screens = {
  month: { load: () => import("./month.js"), label: "month" },
  expenses: { load: () => import("./expenses.js"), label: "expenses" },
  categories: { load: () => import("./categories.js"), label: "categories" },
  todos: { load: () => import("./todos.js"), label: "todos" },
  history: { load: () => import("./history.js"), label: "history" },
  sync: { load: () => import("./sync.js"), label: "sync" },
};

const main = document.getElementById("main");
let session = null;       // GET /v1/session, with canWrite / canReplicate
let shown = null;         // what the current screen's render returned: {refresh, isBusy}
let feed = null;          // AbortController of the change feed
let pendingRefresh = false;

// "#/expenses/2026-11" → {name: "expenses", params: ["2026-11"]}
function route() {
  const [name, ...params] = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  return screens[name] ? { name, params } : { name: "month", params: [] };
}

export function navigate(hash) {
  if (location.hash === hash) render(); else location.hash = hash;
}

async function render({ focus = false } = {}) {
  translateShell();
  if (!token()) return showSignIn();
  if (!session) {
    try {
      session = await api("/v1/session");
    } catch (error) {
      if (error.status === 401) { forgetToken(); return showSignIn(t("badToken")); }
      return replace(main, h("p", { class: "form-error", role: "alert" }, error.message));
    }
    session.canWrite = session.scopes.includes("write");
    session.canReplicate = session.scopes.includes("replicate");
    startFeed(session.appendedIndex);
  }
  const { name, params } = route();
  showNavigation(name);
  const module = await screens[name].load();
  shown = await module.render(main, { params, session, navigate, announce });
  document.title = `${t(screens[name].label)} · Tally`;
  // A new screen starts at its top, and a screen reader starts reading it there.
  if (focus) { window.scrollTo(0, 0); main.focus({ preventScroll: true }); }
}

function showSignIn(message) {
  document.getElementById("nav").hidden = true;
  document.getElementById("sign-out").hidden = true;
  document.title = `${t("signIn")} · Tally`;
  const input = h("input", { id: "token", name: "token", type: "password", required: true, spellcheck: "false" });
  const error = h("p", { class: "form-error", role: "alert", hidden: !message }, message ?? "");
  const form = h("form", { class: "card sign-in", onsubmit: async (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    session = null;
    await render();
  } }, field(t("tokenLabel"), input, t("tokenHint")), error, h("button", { type: "submit", class: "primary" }, t("signIn")));
  replace(main, h("h1", {}, t("signInTitle")), form);
  input.focus();
}

function signOut() {
  feed?.abort();
  feed = null;
  session = null;
  forgetToken();
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

async function refreshShown() {
  if (!shown) return;
  if (shown.isBusy?.()) { pendingRefresh = true; return; }
  pendingRefresh = false;
  await (shown.refresh ? shown.refresh() : render());
  announce(t("live"));
}

function announce(text) {
  const region = document.getElementById("announce");
  region.textContent = "";
  setTimeout(() => { region.textContent = text; }, 50);
}

// A screen whose form closed asks for the refresh it missed.
window.addEventListener("tally:idle", () => { if (pendingRefresh) refreshShown(); });
window.addEventListener("tally:unauthorized", () => { if (session) { session = null; forgetToken(); showSignIn(t("badToken")); } });
window.addEventListener("hashchange", () => render({ focus: true }));
document.getElementById("sign-out").addEventListener("click", signOut);
document.getElementById("language").addEventListener("change", (event) => { setLanguage(event.target.value); render(); });
render();
