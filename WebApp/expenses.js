// Expenses: a month's list with filters and infinite scroll over the API's cursor, and the
// form to add, edit or delete one, with a receipt photo from the phone's camera.
// Routes: #/expenses/YYYY-MM (list), #/expenses/new, #/expenses/id/ID (edit, or view when read-only),
// #/expenses/split/ID (split a receipt into lines of several categories: split.js)

import { api, attachmentURL, query } from "./api.js";
import { clearErrors, deleteButton, field, h, maxNesting, replace, showError } from "./dom.js";
import { day, fromMinorUnits, money, t, toMinorUnits } from "./i18n.js";
import { monthSwitcher, validMonth } from "./month.js";

const PAGE = 50;
const MOST_ROWS = 1000;   // the API's largest page: what a live refresh reloads at most
const TEXT_LIMIT = 64;    // the API's limit for short texts (Limits.maxShortTextLength)
const CURRENCIES = ["KRW", "USD", "EUR", "JPY", "CNY", "GBP"];
// Kept while the page lives, so going back to the list keeps its filters.
const filters = { category: "", tag: "", kind: "", text: "" };

export async function render(main, context) {
  const [first, second] = context.params;
  if (first === "new") return expenseForm(main, context, null);
  if (first === "id" && /^[0-9a-f-]{36}$/.test(second ?? "")) return expenseForm(main, context, second);
  if (first === "split" && /^[0-9a-f-]{36}$/.test(second ?? "")) return (await import("./split.js")).splitForm(main, context, second);
  return list(main, context, validMonth(first));
}

// "Food › Lunch"
export function categoryPath(row) {
  return [row.parentCategoryName, row.categoryName].filter(Boolean).join(" › ");
}

// The category options of a select, indented by depth; `exclude` leaves out a category and
// every category under it (a category cannot move under itself).
export function categoryOptions(categories, selected, { none = t("noCategory"), exclude } = {}) {
  const excluded = new Set(exclude ? [exclude] : []);
  for (const c of categories) if (excluded.has(c.parentId)) excluded.add(c.id);  // parents come before children
  return [h("option", { value: "" }, none),
    categories.filter((c) => !excluded.has(c.id)).map((c) =>
      h("option", { value: c.id, selected: c.id === selected }, `${"— ".repeat(Math.min(c.depth, maxNesting))}${c.icon ? c.icon + " " : ""}${c.name}`)),
    missingOption(selected, categories)];
}

// A choice the list does not hold (deleted, or not yet received here), kept as it is: saving
// the form must not clear what it cannot show.
export function missingOption(selected, items) {
  return selected && !items.some((item) => item.id === selected) ? h("option", { value: selected, selected: true }, t("notHeldHere")) : null;
}

async function list(main, { session, stillShown }, month) {
  const categories = (await api("/v1/categories")).items;
  // `generation` counts fresh starts (a filter changed): a page that arrives for an older one is
  // dropped, and the next page is asked with the filters the list was started with.
  let cursor = null, loaded = 0, loading = false, generation = 0, started = {};
  const rows = h("ul", { class: "expense-list", "aria-label": t("expenses") });
  const end = h("p", { class: "muted end", hidden: true }, t("endOfList"));
  const more = h("button", { type: "button", class: "quiet", onclick: () => loadPage() }, t("loadMore"));
  const sentinel = h("div", { class: "sentinel", "aria-hidden": "true" });

  const control = (id, element) => { element.id = id; element.addEventListener("change", () => restart()); return element; };
  const text = control("filter-text", h("input", { type: "search", value: filters.text, placeholder: t("search"), maxlength: TEXT_LIMIT }));
  let typing = null;
  text.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(restart, 300); });
  const filterForm = h("form", { class: "filters", role: "search", "aria-label": t("filters"), onsubmit: (e) => { e.preventDefault(); restart(); } },
    field(t("category"), control("filter-category", h("select", {}, categoryOptions(categories, filters.category, { none: t("any") })))),
    field(t("tag"), control("filter-tag", h("input", { type: "text", value: filters.tag, autocomplete: "off", maxlength: TEXT_LIMIT }))),
    field(t("kind"), control("filter-kind", h("select", {},
      h("option", { value: "" }, t("any")),
      h("option", { value: "expense", selected: filters.kind === "expense" }, t("expenseKind")),
      h("option", { value: "income", selected: filters.kind === "income" }, t("incomeKind"))))),
    field(t("text"), text));

  function readFilters() {
    Object.assign(filters, {
      category: filterForm.querySelector("#filter-category").value, tag: filterForm.querySelector("#filter-tag").value.trim(),
      kind: filterForm.querySelector("#filter-kind").value, text: text.value.trim(),
    });
    return { month, ...filters };
  }

  async function loadPage({ limit = PAGE, fresh = false } = {}) {
    if (!fresh && (loading || cursor === null)) return;
    const mine = fresh ? ++generation : generation;
    if (fresh) started = readFilters();
    loading = true;
    try {
      const page = await api(`/v1/expenses${query({ ...started, limit, cursor: fresh ? null : cursor })}`);
      if (mine !== generation || !stillShown()) return;
      if (fresh) { rows.replaceChildren(); loaded = 0; }
      rows.append(...page.items.map((row) => expenseRow(row)));
      loaded += page.items.length;
      cursor = page.nextCursor ?? null;
      const done = cursor === null;
      more.hidden = done;
      end.hidden = !done || loaded === 0;
      if (loaded === 0) rows.append(h("li", { class: "muted" }, t("noExpenses")));
    } catch (error) {
      if (mine !== generation) return;
      rows.replaceChildren(h("li", { class: "form-error", role: "alert" }, error.message));
      more.hidden = true;
    } finally {
      if (mine === generation) loading = false;
    }
    // The end of the list may still be in view (a tall screen, or a scroll that came while this
    // page loaded, which the observer does not report again): then the next page, too.
    if (mine === generation && cursor !== null && main.contains(sentinel)) {
      requestAnimationFrame(() => {
        if (sentinel.getBoundingClientRect().top < window.innerHeight) loadPage();
      });
    }
  }

  function restart() { cursor = null; loaded = 0; return loadPage({ fresh: true }); }

  replace(main,
    monthSwitcher(month, (m) => `#/expenses/${m}`),
    session.canWrite ? h("p", {}, h("a", { class: "button primary", href: "#/expenses/new" }, `+ ${t("addExpense")}`)) : h("p", { class: "muted" }, session.readOnlyNote),
    h("details", { class: "card", open: Object.values(filters).some(Boolean) }, h("summary", {}, t("filters")), filterForm),
    rows, more, end, sentinel);
  await loadPage({ fresh: true });

  const observer = new IntersectionObserver((entries) => {
    if (!main.contains(sentinel)) { observer.disconnect(); return; }
    if (entries.some((e) => e.isIntersecting)) loadPage();
  });
  observer.observe(sentinel);
  return {
    // Live: the rows already shown, again (up to the API's largest page).
    refresh: () => loadPage({ fresh: true, limit: Math.min(MOST_ROWS, Math.max(PAGE, loaded)) }),
  };
}

function expenseRow(row) {
  const title = row.payee || row.memo || categoryPath(row) || t(row.kind === "income" ? "incomeKind" : "expenseKind");
  const details = [categoryPath(row), row.payment, row.tags.map((tag) => `#${tag}`).join(" ")].filter(Boolean).join(" · ");
  const thumbnail = row.attachments.length ? thumbnailImage(row.attachments[0], row.missingAttachments.includes(row.attachments[0]), title) : null;
  return h("li", {}, h("a", { class: "expense-row", href: `#/expenses/id/${row.id}` },
    h("span", { class: "when" }, day(row.date, "short")),
    h("span", { class: "what" }, h("span", { class: "title" }, title), details ? h("span", { class: "muted" }, details) : null),
    h("span", { class: `amount ${row.kind}` }, (row.kind === "income" ? "+" : "") + money(row.amount, row.currency)),
    thumbnail));
}

// A receipt's thumbnail, loaded with the token (an <img src> could not send it). A file with
// no thumbnail (a PDF) shows as a document sign; one not yet arrived from a peer, as waiting.
function thumbnailImage(digest, missing, what) {
  if (missing) return h("span", { class: "thumb missing", title: t("attachmentMissing"), role: "img", "aria-label": t("attachmentMissing") }, "⧗");
  const image = h("img", { class: "thumb", alt: t("receiptOf", { what }), width: 48, height: 48 });
  attachmentURL(digest).then((url) => { image.src = url; })
    .catch(() => image.replaceWith(h("span", { class: "thumb", role: "img", "aria-label": t("receiptFile") }, "📄")));
  return image;
}

async function expenseForm(main, { session, navigate, announce, stillShown }, id) {
  const [categories, expense, defaultCurrency, people, accounts] = await Promise.all([
    api("/v1/categories").then((c) => c.items),
    id ? api(`/v1/expenses/${encodeURIComponent(id)}`) : null,
    // From the list of settings: a ledger without one answers it with nothing, not a 404.
    id ? null : api("/v1/settings").then((s) => s.items.find((setting) => setting.key === "defaultCurrency")?.value)
      .then((value) => (typeof value === "string" ? value : null)).catch(() => null),
    householdNames(),
    api("/v1/accounts").then((a) => a.items),
  ]);
  if (!stillShown()) return {};
  if (id && !session.canWrite) return view(main, expense, categories, accounts, session.readOnlyNote);
  const currency = expense?.currency ?? defaultCurrency ?? "KRW";
  const control = (name, element) => { element.id = `expense-${name}`; element.name = name; return element; };
  const kind = control("kind", h("select", {},
    h("option", { value: "expense", selected: expense?.kind !== "income" }, t("expenseKind")),
    h("option", { value: "income", selected: expense?.kind === "income" }, t("incomeKind"))));
  const amount = control("amount", h("input", { type: "text", inputmode: "decimal", autocomplete: "off", required: true,
    value: expense ? fromMinorUnits(expense.amount, currency) : "" }));
  const currencies = [...new Set([currency, ...CURRENCIES])];
  const currencySelect = control("currency", h("select", {}, currencies.map((c) => h("option", { value: c, selected: c === currency }, c))));
  const today = new Date(Date.now() - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 10);
  const date = control("date", h("input", { type: "date", required: true, value: expense ? expense.date.slice(0, 10) : today }));
  const category = control("categoryId", h("select", {}, categoryOptions(categories, expense?.categoryId)));
  const payee = control("payee", h("input", { type: "text", value: expense?.payee ?? "", autocomplete: "off", maxlength: TEXT_LIMIT }));
  // Which account or card it was paid from (a card's purchases make its bills): the open ones,
  // and the one it names even if archived since.
  const account = control("accountId", h("select", {}, h("option", { value: "" }, t("noAccount")),
    accounts.filter((a) => !a.isArchived || a.id === expense?.accountId)
      .map((a) => h("option", { value: a.id, selected: a.id === expense?.accountId }, `${a.name} (${a.currency})`)),
    missingOption(expense?.accountId, accounts)));
  const payment = control("payment", h("input", { type: "text", value: expense?.payment ?? "", autocomplete: "off", list: "payment-methods", maxlength: TEXT_LIMIT }));
  const memo = control("memo", h("textarea", { rows: 2 }, expense?.memo ?? ""));
  const tags = control("tags", h("input", { type: "text", value: expense?.tags.join(", ") ?? "", autocomplete: "off" }));
  const photo = control("attachments", h("input", { type: "file", accept: "image/*,application/pdf", capture: "environment" }));
  // Who paid and who shares it (issue 34): names from the household — its members, and every
  // name already used — offered as the person types; a member signed in is the payer of a new one.
  const paidBy = control("paidBy", h("input", { type: "text", value: expense?.paidBy ?? (expense ? "" : session.member ?? ""), autocomplete: "off",
    list: "people-names", maxlength: 64 }));
  const split = control("split", h("select", {}, ["equal", "shares", "amounts"].map((s) => h("option", { value: s, selected: (expense?.split ?? "equal") === s }, t(`split_${s}`)))));
  const shares = control("shares", h("input", { type: "text", autocomplete: "off", value: sharesText(expense), placeholder: t("sharesPlaceholder") }));
  const peopleNames = h("datalist", { id: "people-names" }, people.map((name) => h("option", { value: name })));
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const status = h("p", { class: "muted", role: "status" });
  const submit = h("button", { type: "submit", class: "primary" }, t("save"));
  // One key per form: a second tap, or a retry after a lost answer, cannot make a second expense.
  const idempotencyKey = crypto.randomUUID();

  const existing = expense?.attachments.length
    ? h("div", { class: "thumbs" }, expense.attachments.map((digest) => thumbnailImage(digest, expense.missingAttachments.includes(digest), expense.payee ?? t("expenseKind"))))
    : null;

  // What the form says, as the API's fields. On an edit, only what the person changed is sent,
  // so a field someone else changed meanwhile (on another device) is not written back.
  function changes() {
    const now = {
      kind: kind.value, currency: currencySelect.value, categoryId: category.value || null,
      payee: payee.value.trim() || null, payment: payment.value.trim() || null, memo: memo.value.trim() || null,
      accountId: account.value || null,
      // Typed money becomes minor units; text that is not money goes to the API as typed, and
      // its answer says what is wrong — beside the field.
      amount: toMinorUnits(amount.value, currencySelect.value) ?? amount.value,
      paidBy: paidBy.value.trim() || null,
    };
    // Shared with nobody: no split either. Typed shares become {name: number} (amounts as money).
    const typedShares = shares.value.trim() ? sharesObject(shares.value, split.value, currencySelect.value) : null;
    const sharing = typedShares === null ? { split: null, shares: null } : { split: split.value, shares: typedShares };
    const typedTags = tags.value.split(",").map((tag) => tag.trim()).filter(Boolean);
    // A new expense names every field, sharing too (null when shared with nobody): a retry after
    // a lost answer is compared with the first on the fields it names (422 when the form changed).
    if (!expense) return { ...now, date: date.value, tags: typedTags, ...sharing };
    const body = {};
    for (const [name, value] of Object.entries(now)) if (value !== (expense[name] ?? null)) body[name] = value;
    if (sharing.split !== (expense.split ?? null)) body.split = sharing.split;
    if (JSON.stringify(sharing.shares) !== JSON.stringify(expense.shares ?? null)) body.shares = sharing.shares;
    if (tags.value !== expense.tags.join(", ")) body.tags = typedTags;
    if (date.value !== expense.date.slice(0, 10)) body.date = date.value;
    return body;
  }

  // A retry while the first request with this key is still being written is answered 409
  // idempotency_key_in_use; asked again a moment later, the service answers with the expense
  // the first request made. Waits up to ~3 s for it before showing the error. A retry after the
  // person changed the form is answered 422 idempotency_key_reused, naming the expense the
  // first request made: what the form says now is written to it.
  async function createOnce(body) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await api("/v1/expenses", { method: "POST", body, headers: { "Idempotency-Key": idempotencyKey } });
      } catch (error) {
        if (error.code === "idempotency_key_reused" && error.id) {
          return await api(`/v1/expenses/${encodeURIComponent(error.id)}`, { method: "PATCH", body });
        }
        // Not once the person has left the form: the first request still makes its expense.
        if (error.code !== "idempotency_key_in_use" || attempt === 15 || !form.isConnected) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  async function save(event) {
    event.preventDefault();
    if (submit.disabled) return;
    clearErrors(form);
    const body = changes();
    if (expense && !Object.keys(body).length && !photo.files.length) {  // nothing changed: nothing to write
      navigate(`#/expenses/${expense.date.slice(0, 7)}`);
      window.dispatchEvent(new Event("tally:idle"));
      return;
    }
    submit.disabled = true;
    try {
      if (photo.files.length) {
        status.textContent = t("photoUploading");
        const file = photo.files[0];
        const uploaded = await api("/v1/attachments", { method: "POST", body: file, headers: { "Content-Type": file.type || "application/octet-stream" } });
        body.attachments = [...(expense?.attachments ?? []), uploaded.digest];
      }
      const saved = expense
        ? await api(`/v1/expenses/${encodeURIComponent(id)}`, { method: "PATCH", body })
        : await createOnce(body);
      announce(t("saved"));
      navigate(`#/expenses/${(saved.date ?? body.date ?? today).slice(0, 7)}`);
      window.dispatchEvent(new Event("tally:idle"));
    } catch (error) {
      status.textContent = "";
      showError(form, formError, error);
    } finally {
      submit.disabled = false;
    }
  }

  const label = expense?.payee ?? t("expenseKind");
  const form = h("form", { class: "card expense-form", novalidate: true, onsubmit: save },
    field(t("kind"), kind),
    h("div", { class: "row" }, field(t("amount"), amount), field(t("currency"), currencySelect)),
    field(t("date"), date),
    field(t("category"), category),
    field(t("payee"), payee),
    accounts.length || expense?.accountId ? field(t("account"), account) : null,
    field(t("payment"), payment),
    h("datalist", { id: "payment-methods" }, ["card", "cash", "transfer"].map((v) => h("option", { value: v }))),
    field(t("memo"), memo),
    field(t("tags"), tags, t("tagsHint")),
    h("details", { class: "sharing", open: Boolean(expense?.paidBy || expense?.shares) },
      h("summary", {}, t("whoPaid")),
      field(t("paidBy"), paidBy), peopleNames,
      h("div", { class: "row" }, field(t("sharedWith"), shares, t("sharesHint")), field(t("splitHow"), split))),
    existing,
    field(t("receipt"), photo, t("receiptHint")),
    formError, status,
    h("div", { class: "actions" },
      submit,
      h("a", { class: "button quiet", href: `#/expenses/${(expense?.date ?? today).slice(0, 7)}`,
        onclick: () => window.dispatchEvent(new Event("tally:idle")) }, t("cancel")),
      expense ? deleteButton(label, announce, async () => {
        await api(`/v1/expenses/${encodeURIComponent(id)}`, { method: "DELETE" });
        announce(t("deleted"));
        navigate(`#/expenses/${expense.date.slice(0, 7)}`);
        window.dispatchEvent(new Event("tally:idle"));
      }, (error) => showError(form, formError, error)) : null));

  replace(main, h("h1", {}, expense ? t("editExpense") : t("newExpense")), form,
    expense ? h("p", {}, h("a", { class: "button", id: "split-link", href: `#/expenses/split/${id}` }, t("splitReceipt"))) : null,
    expense ? h("p", {}, h("a", { href: `#/history/${id}` }, t("showHistory"))) : null);
  amount.focus();
  // A form is never redrawn under a person's hands (an armed delete, a half-made choice): live
  // changes wait until it is saved, cancelled or deleted. An edit sends only the fields changed.
  return { isBusy: () => true };
}

// Every name of the household: its members (a hosted ledger's) and the people already named.
async function householdNames() {
  const [members, people] = await Promise.all([
    api("/v1/members").then((m) => m.items.map((member) => member.name)).catch(() => []),
    api("/v1/people").then((p) => p.items.map((person) => person.name)).catch(() => []),
  ]);
  return [...new Set([...members, ...people])].sort();
}

// An expense's shares as typed: "minji, jisoo" (equal) or "minji=2, jisoo=1".
function sharesText(expense) {
  if (!expense?.shares) return "";
  return Object.entries(expense.shares).map(([name, value]) =>
    expense.split === "equal" ? name : `${name}=${expense.split === "amounts" ? fromMinorUnits(value, expense.currency) : value}`).join(", ");
}

// Typed shares as the API's object, names in order: equal gives each 1; amounts are money.
// A part that is not a number goes as typed, and the API's answer says what is wrong.
function sharesObject(text, split, currency) {
  const pairs = text.split(",").map((part) => part.trim()).filter(Boolean).map((part) => {
    const at = part.lastIndexOf("=");
    const name = (at < 0 ? part : part.slice(0, at)).trim();
    const number = at < 0 ? "1" : part.slice(at + 1).trim();
    const value = split === "equal" ? 1 : split === "amounts" ? toMinorUnits(number, currency) : (/^\d+$/.test(number) ? Number(number) : null);
    return [name, value ?? number];
  });
  return Object.fromEntries(pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// A read-only view of one expense (a read-only token, or the ledger as it was).
function view(main, expense, categories, accounts, readOnlyNote) {
  const category = categories.find((c) => c.id === expense.categoryId);
  const account = accounts.find((a) => a.id === expense.accountId);
  const item = (label, value) => (value ? [h("dt", {}, label), h("dd", {}, value)] : null);
  replace(main, h("h1", {}, expense.payee ?? t("expenseKind")),
    h("p", { class: "muted" }, readOnlyNote),
    h("dl", { class: "card details" },
      item(t("amount"), money(expense.amount, expense.currency)), item(t("kind"), t(expense.kind === "income" ? "incomeKind" : "expenseKind")),
      item(t("date"), day(expense.date)), item(t("category"), category?.name), item(t("account"), account?.name), item(t("payment"), expense.payment),
      item(t("memo"), expense.memo), item(t("tags"), expense.tags.join(", "))),
    expense.attachments.length ? h("div", { class: "thumbs" }, expense.attachments.map((d) => thumbnailImage(d, expense.missingAttachments.includes(d), expense.payee ?? ""))) : null,
    h("p", {}, h("a", { href: `#/history/${expense.id}` }, t("showHistory"))),
    h("p", {}, h("a", { href: `#/expenses/${expense.date.slice(0, 7)}` }, `‹ ${t("expenses")}`)));
  return {};
}
