// Accounts: where the money is — each account's balance now, the totals per currency, card
// bills, reconciliation against a statement (the difference, and the cleared lines changed
// since), and forms to add an account, to move money between two (a transfer, which is not
// spending) and to reconcile one.
// Route: #/accounts

import { api } from "./api.js";
import { clearErrors, field, h, replace, showError } from "./dom.js";
import { money, monthName, t, toMinorUnits } from "./i18n.js";
import { shiftMonth, thisMonth } from "./month.js";

const kinds = ["bank", "card", "cash", "savings", "loan"];

// A card's statements worth showing: the three latest with something charged or cancelled on
// them, else the newest one (next month's, with nothing on it yet).
function shownBills(bills) {
  const active = bills.filter((bill) => bill.charged || bill.cancelled);
  return active.length ? active.slice(-3).reverse() : bills.slice(-1);
}

export async function render(main, { session, announce, stillShown }) {
  async function draw() {
    const [balances, accounts] = await Promise.all([api("/v1/balances"), api("/v1/accounts")]);
    const cards = accounts.items.filter((account) => account.closingDay);
    // The last year's statements: those with something on them (latest first), else the next one.
    const from = shiftMonth(thisMonth(), -11);
    const bills = await Promise.all(cards.map((card) => api(`/v1/accounts/${encodeURIComponent(card.id)}/bills?from=${from}`)));
    const reconciled = accounts.items.filter((account) => account.reconciledThrough);
    const reconciliations = await Promise.all(reconciled.map((account) => api(`/v1/accounts/${encodeURIComponent(account.id)}/reconciliation`)));
    if (!stillShown()) return;
    const byId = new Map(balances.items.map((account) => [account.id, account]));
    replace(main, h("h1", {}, t("accounts")),
      h("section", { class: "card", "aria-labelledby": "account-list" },
        h("h2", { id: "account-list" }, t("balances")),
        balances.items.length
          ? h("ul", { class: "accounts" }, balances.items.map((account) => h("li", { class: account.isArchived ? "archived" : null },
            h("span", { class: "account-name" }, account.name), " ",
            h("span", { class: "muted" }, t(`kind_${account.kind}`)),
            h("span", { class: account.balance < 0 ? "account-balance expense" : "account-balance" }, money(account.balance, account.currency)),
            account.otherCurrencyExpenses ? h("p", { class: "hint" }, t("otherCurrency", { n: account.otherCurrencyExpenses })) : null)))
          : h("p", { class: "muted" }, t("noAccounts")),
        balances.totals.length
          ? h("dl", { class: "totals" }, balances.totals.flatMap((total) => [h("dt", {}, t("totalIn", { currency: total.currency })), h("dd", {}, money(total.balance, total.currency))]))
          : null),
      cards.length ? h("section", { class: "card", "aria-labelledby": "card-bills" },
        h("h2", { id: "card-bills" }, t("cardBills")),
        cards.map((card, index) => h("div", { class: "bills" },
          h("h3", {}, card.name),
          h("ul", { class: "settle" }, shownBills(bills[index].items).map((bill) => h("li", { class: `bill ${bill.status}` },
            h("span", {}, t("statement", { month: monthName(bill.month), from: bill.from, to: bill.to })),
            h("span", { class: "account-balance" }, money(bill.amount, card.currency)),
            h("span", { class: bill.status === "overdue" ? "expense" : "muted" }, t(`bill_${bill.status}`, { due: bill.due }))))))))
        : null,
      reconciled.length ? h("section", { class: "card", "aria-labelledby": "reconciliations" },
        h("h2", { id: "reconciliations" }, t("reconcile")),
        reconciled.map((account, index) => reconciliationOf(account, reconciliations[index]))) : null,
      session.canWrite ? accountForm() : null,
      session.canWrite && accounts.items.length ? reconcileForm(accounts.items) : null,
      session.canWrite && balances.items.length >= 2 ? transferForm(balances.items, byId) : null);
  }

  // One account against its statement: the difference, and the cleared lines changed since.
  function reconciliationOf(account, reconciliation) {
    const difference = reconciliation.difference;
    return h("div", { class: "reconciliation" },
      h("h3", {}, account.name),
      h("p", {}, t("reconciledThrough", { day: reconciliation.reconciledThrough.slice(0, 10) }), " · ",
        difference === null
          ? h("span", { class: "muted" }, t("noStatementBalance"))
          : h("span", { class: difference ? "expense" : "ok" },
            difference ? t("difference", { amount: money(difference, account.currency) }) : t("noDifference")), " · ",
        h("span", { class: "muted" }, t("clearedLines", { n: reconciliation.clearedCount }))),
      reconciliation.changedSince.length ? [
        h("p", { class: "note" }, t("changedSince")),
        h("ul", { class: "settle" }, reconciliation.changedSince.map((line) => h("li", {},
          line.type === "expense" ? h("a", { href: `#/expenses/id/${line.id}` }, line.date.slice(0, 10)) : h("span", {}, line.date.slice(0, 10)),
          h("span", { class: "account-balance" }, money(line.amount, account.currency))))),
      ] : null);
  }

  function reconcileForm(accounts) {
    const formError = h("p", { class: "form-error", role: "alert", hidden: true });
    const account = h("select", { id: "reconcile-account", name: "account" }, accounts.filter((a) => !a.isArchived).map((a) => h("option", { value: a.id }, a.name)));
    const today = new Date(Date.now() - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 10);
    const through = h("input", { id: "reconcile-through", name: "reconciledThrough", type: "date", value: today, required: true });
    const balance = h("input", { id: "reconcile-balance", name: "statementBalance", inputmode: "decimal", required: true, autocomplete: "off" });
    const form = h("form", { class: "card", "aria-labelledby": "reconcile-title", onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      const chosen = accounts.find((a) => a.id === account.value);
      const minor = toMinorUnits(balance.value.trim().replace(/^-/, ""), chosen?.currency ?? "KRW");
      // Through the end of the statement's day, in this device's time zone.
      const offset = -new Date().getTimezoneOffset();
      const zone = `${offset < 0 ? "-" : "+"}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, "0")}:${String(Math.abs(offset) % 60).padStart(2, "0")}`;
      const body = {
        reconciledThrough: through.value ? `${through.value}T23:59:59${zone}` : through.value,
        statementBalance: minor === null ? balance.value : (balance.value.trim().startsWith("-") ? -minor : minor),
      };
      try {
        await api(`/v1/accounts/${encodeURIComponent(account.value)}`, { method: "PATCH", body });
        announce(t("saved"));
        await draw();
      } catch (error) { showError(form, formError, error); }
    } },
      h("h2", { id: "reconcile-title" }, t("reconcile")),
      h("p", { class: "hint" }, t("reconcileHint")),
      field(t("reconcileAccount"), account), field(t("reconcileThrough"), through), field(t("statementBalance"), balance), formError,
      h("button", { type: "submit", class: "primary" }, t("reconcile")));
    return form;
  }

  function accountForm() {
    const formError = h("p", { class: "form-error", role: "alert", hidden: true });
    const name = h("input", { id: "account-name", name: "name", required: true, autocomplete: "off" });
    const kind = h("select", { id: "account-kind", name: "kind" }, kinds.map((k) => h("option", { value: k }, t(`kind_${k}`))));
    const currency = h("input", { id: "account-currency", name: "currency", value: "KRW", maxlength: 3, autocapitalize: "characters" });
    const opening = h("input", { id: "account-opening", name: "openingBalance", inputmode: "decimal", value: "0" });
    const form = h("form", { class: "card", "aria-labelledby": "add-account", onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      const code = currency.value.trim().toUpperCase();
      const minor = toMinorUnits(opening.value.replace(/^-/, ""), code);
      const body = { name: name.value, kind: kind.value, currency: code, openingBalance: minor === null ? opening.value : (opening.value.trim().startsWith("-") ? -minor : minor) };
      try {
        await api("/v1/accounts", { method: "POST", body });
        announce(t("saved"));
        await draw();
      } catch (error) { showError(form, formError, error); }
    } },
      h("h2", { id: "add-account" }, t("addAccount")),
      field(t("name"), name), field(t("accountKind"), kind), field(t("currency"), currency), field(t("openingBalance"), opening, t("openingHint")),
      formError, h("button", { type: "submit", class: "primary" }, t("add")));
    return form;
  }

  function transferForm(accounts, byId) {
    const formError = h("p", { class: "form-error", role: "alert", hidden: true });
    const options = () => accounts.filter((a) => !a.isArchived).map((a) => h("option", { value: a.id }, `${a.name} (${a.currency})`));
    const from = h("select", { id: "transfer-from", name: "accountId" }, options());
    const to = h("select", { id: "transfer-to", name: "toAccountId" }, options());
    if (to.options.length > 1) to.selectedIndex = 1;
    const amount = h("input", { id: "transfer-amount", name: "amount", inputmode: "decimal", required: true });
    // Between two currencies, what arrives is not what left: asked for only then.
    const arriving = h("input", { id: "transfer-to-amount", name: "toAmount", inputmode: "decimal" });
    const arrivingField = field(t("amountArriving"), arriving, t("amountArrivingHint"));
    const currencies = () => [byId.get(from.value)?.currency ?? "KRW", byId.get(to.value)?.currency ?? "KRW"];
    const showArriving = () => { const [a, b] = currencies(); arrivingField.hidden = a === b; };
    from.addEventListener("change", showArriving);
    to.addEventListener("change", showArriving);
    showArriving();
    const form = h("form", { class: "card", "aria-labelledby": "add-transfer", onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      const [currency, toCurrency] = currencies();
      const minor = toMinorUnits(amount.value, currency);
      const body = { accountId: from.value, toAccountId: to.value, amount: minor ?? amount.value };
      if (currency !== toCurrency) body.toAmount = toMinorUnits(arriving.value, toCurrency) ?? arriving.value;
      try {
        await api("/v1/transfers", { method: "POST", body });
        announce(t("saved"));
        await draw();
      } catch (error) { showError(form, formError, error); }
    } },
      h("h2", { id: "add-transfer" }, t("addTransfer")),
      h("p", { class: "hint" }, t("transferHint")),
      field(t("transferFrom"), from), field(t("transferTo"), to), field(t("amount"), amount), arrivingField, formError,
      h("button", { type: "submit", class: "primary" }, t("moveMoney")));
    return form;
  }

  await draw();
  return { refresh: draw };
}
