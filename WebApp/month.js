// Month: totals per currency, spending by category (tap a category to see its
// sub-categories), by payment method, and every month's spending as a bar chart; counted by
// purchase date, or by bill (card purchases in the month their bill is due).
// Route: #/month/YYYY-MM[/CATEGORY-ID]

import { api, query } from "./api.js";
import { budgetBars, groupBars, monthBars } from "./charts.js";
import { clearErrors, deleteButton, field, h, maxNesting, replace, showError } from "./dom.js";
import { money, monthName, t, toMinorUnits } from "./i18n.js";

export function thisMonth() {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}`;
}

export function shiftMonth(month, by) {
  const [y, m] = month.split("-").map(Number);
  const date = new Date(Date.UTC(y, m - 1 + by, 1));
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, "0")}`;
}

export function validMonth(text) {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(text ?? "") ? text : thisMonth();
}

// The month switcher shared with the expenses screen: ‹ November 2026 ›
export function monthSwitcher(month, hrefOf) {
  return h("div", { class: "switcher" },
    h("a", { class: "button quiet", href: hrefOf(shiftMonth(month, -1)), "aria-label": t("previousMonth") }, "‹"),
    h("h1", {}, monthName(month)),
    h("a", { class: "button quiet", href: hrefOf(shiftMonth(month, 1)), "aria-label": t("nextMonth") }, "›"));
}

// Kept while the page lives: how the month counts card purchases.
let countedBy = "purchase";

// "By purchase date | By bill": two radio buttons in a fieldset.
function countedBySwitch(redraw) {
  const choice = (value) => {
    const id = `counted-by-${value}`;
    return h("span", { class: "check" },
      h("input", { type: "radio", id, name: "counted-by", value, checked: countedBy === value,
        onchange: () => { countedBy = value; redraw(); } }),
      h("label", { for: id }, t(value === "bill" ? "byBill" : "byPurchase")));
  };
  return h("fieldset", { class: "counted-by" }, h("legend", {}, t("countedBy")), choice("purchase"), choice("bill"));
}

export async function render(main, { params, session, announce, stillShown }) {
  const month = validMonth(params[0]);
  const category = /^[0-9a-f-]{36}$/.test(params[1] ?? "") ? params[1] : null;

  async function draw() {
    const [summary, months, categories] = await Promise.all([
      api(`/v1/summary${query({ month, category, by: countedBy === "bill" ? "bill" : undefined })}`),
      api("/v1/summary/months"),
      api("/v1/categories"),
    ]);
    if (!stillShown()) return;
    const currencies = summary.totals.map((total) => total.currency);
    const primary = summary.totals.slice().sort((a, b) => b.count - a.count)[0]?.currency ?? months.items.at(-1)?.currency ?? "KRW";
    const categoryName = category ? categories.items.find((c) => c.id === category)?.name ?? "?" : null;

    const totals = summary.totals.length
      ? h("div", { class: "totals" }, summary.totals.map((total) => h("section", { class: "card total", "aria-label": total.currency },
          h("h2", {}, total.currency),
          h("dl", {},
            h("dt", {}, t("income")), h("dd", { class: "income" }, money(total.income, total.currency)),
            h("dt", {}, t("expense")), h("dd", { class: "expense" }, money(total.expense, total.currency)),
            h("dt", {}, t("net")), h("dd", {}, money(total.net, total.currency))),
          h("p", { class: "muted" }, t("count", { n: total.count })))))
      : h("p", { class: "card muted" }, t("nothingThisMonth"));

    const spending = currencies.map((currency) => {
      const groups = summary.byCategory.filter((g) => g.kind === "expense" && g.currency === currency)
        .map((g) => ({ ...g, label: g.categoryId ? g.label : t("noCategory") }));
      if (!groups.length) return null;
      return h("div", {}, currencies.length > 1 ? h("h3", {}, currency) : null,
        groupBars(groups, {
          label: t("byCategory"),
          canSelect: (g) => g.categoryId && g.categoryId !== category,
          onSelect: (g) => { location.hash = `#/month/${month}/${g.categoryId}`; },
        }));
    });

    const byPayment = currencies.map((currency) => {
      const groups = summary.byPayment.filter((g) => g.kind === "expense" && g.currency === currency)
        .map((g) => ({ ...g, label: g.payment ?? t("noPayment") }));
      return groups.length ? h("div", {}, currencies.length > 1 ? h("h3", {}, currency) : null, groupBars(groups, { label: t("byPayment") })) : null;
    });

    // The twelve months up to the one shown (those with entries).
    const overview = months.items.filter((m) => m.currency === primary && m.month <= month).slice(-12);

    replace(main,
      monthSwitcher(month, (m) => `#/month/${m}`),
      category ? h("p", { class: "muted" }, t("thisMonthsTotals")) : null,
      countedBySwitch(draw),
      totals,
      h("section", { class: "card", "aria-labelledby": "by-category" },
        h("h2", { id: "by-category" }, category ? t("inCategory", { name: categoryName }) : t("byCategory")),
        category ? h("p", {}, h("a", { href: `#/month/${month}` }, `‹ ${t("allCategories")}`)) : h("p", { class: "muted" }, t("drillHint")),
        spending.some(Boolean) ? spending : h("p", { class: "muted" }, t("nothingThisMonth"))),
      h("section", { class: "card", "aria-labelledby": "budgets" },
        h("h2", { id: "budgets" }, t("budgets")),
        summary.budgets.length
          ? budgetBars(summary.budgets.map((b) => ({ ...b, label: b.categoryName ?? (b.categoryId ? t("deletedCategory") : t("allSpending")) })), {
              label: t("budgets"),
              onDelete: session.canWrite ? (b) => deleteButton(`${t("budget")} ${b.label}`, announce, async () => {
                await api(`/v1/budgets/${encodeURIComponent(b.budgetId)}`, { method: "DELETE" });
                announce(t("deleted"));
                await draw();
              }, (error) => main.prepend(h("p", { class: "form-error", role: "alert" }, error.message))) : null,
            })
          : h("p", { class: "muted" }, t("noBudgets")),
        session.canWrite ? budgetForm(categories.items, month, primary, async () => { announce(t("saved")); await draw(); }) : null),
      h("section", { class: "card", "aria-labelledby": "by-payment" }, h("h2", { id: "by-payment" }, t("byPayment")), byPayment),
      h("section", { class: "card", "aria-labelledby": "overview" },
        h("h2", { id: "overview" }, `${t("monthsOverview")} (${primary})`),
        overview.length ? monthBars(overview, { currency: primary, current: month, label: t("monthsOverview"), hrefOf: (m) => `#/month/${m}` }) : null),
      h("p", {}, h("a", { class: "button", href: `#/expenses/${month}` }, t("seeExpenses"))));
  }

  await draw();
  // Busy while a budget's amount is being typed (a refresh would wipe it).
  return { refresh: draw, isBusy: () => Boolean(main.querySelector("#budget-amount")?.value.trim()) };
}

// "Set a budget": for a category (its sub-categories count toward it) or all spending, from
// this month on — or for this month only. A later budget of the same category takes over.
function budgetForm(categories, month, currency, saved) {
  const category = h("select", { id: "budget-category", name: "categoryId" }, h("option", { value: "" }, t("allSpending")),
    categories.map((c) => h("option", { value: c.id }, `${"— ".repeat(Math.min(c.depth, maxNesting))}${c.name}`)));
  const amount = h("input", { id: "budget-amount", name: "amount", type: "text", inputmode: "decimal", autocomplete: "off" });
  const currencySelect = h("select", { id: "budget-currency", name: "currency" },
    [...new Set([currency, "KRW", "USD", "EUR", "JPY"])].map((c) => h("option", { value: c }, c)));
  const onlyThisMonth = h("input", { id: "budget-only", type: "checkbox" });
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const form = h("form", { class: "inline-form", novalidate: true, onsubmit: async (event) => {
    event.preventDefault();
    clearErrors(form);
    const body = { categoryId: category.value || null, currency: currencySelect.value, fromMonth: month,
      amount: toMinorUnits(amount.value, currencySelect.value) ?? amount.value };
    if (onlyThisMonth.checked) body.toMonth = month;
    try {
      await api("/v1/budgets", { method: "POST", body });
      amount.value = "";
      await saved();
    } catch (e) { showError(form, error, e); }
  } },
    field(t("category"), category),
    h("div", { class: "row" }, field(t("budgetAmount"), amount), field(t("currency"), currencySelect)),
    h("div", { class: "check" }, onlyThisMonth, h("label", { for: "budget-only" }, t("onlyThisMonth", { month: monthName(month) }))),
    error, h("button", { type: "submit", class: "primary" }, t("setBudget")));
  return h("details", { class: "adder" }, h("summary", {}, `+ ${t("setBudget")}`), form);
}
