// Reports: the last 12 months — spending per category per month, income against spending,
// and the net worth at each month's end — as a bar chart and as a table (the numbers a
// screen reader reads); and the year in review (this year against the last, where the money
// went, the largest expenses). Route: #/reports

import { api, query } from "./api.js";
import { monthBars } from "./charts.js";
import { h, replace } from "./dom.js";
import { money, monthName, t } from "./i18n.js";

export async function render(main, { stillShown }) {
  async function draw() {
    const [report, year] = await Promise.all([api(`/v1/reports/months${query({ months: 12 })}`), api("/v1/reports/year")]);
    if (!stillShown()) return;
    const months = report.months;
    const sections = report.trend.map((line) => {
      const bars = months.map((month, index) => ({ month, expense: line.expense[index] }));
      const categories = report.categories.filter((c) => c.currency === line.currency);
      const worth = report.netWorth.map((point) => point.totals.find((total) => total.currency === line.currency)?.balance ?? null);
      const row = (label, values, className) => h("tr", { class: className },
        h("th", { scope: "row" }, label), values.map((value) => h("td", {}, value === null ? "" : money(value, line.currency))));
      return h("section", { class: "card", "aria-labelledby": `report-${line.currency}` },
        h("h2", { id: `report-${line.currency}` }, t("reportIn", { currency: line.currency })),
        monthBars(bars, { currency: line.currency, current: months[months.length - 1], label: t("spendingByMonth"), hrefOf: (month) => `#/month/${month}` }),
        h("div", { class: "table-scroll", tabindex: 0, role: "region", "aria-labelledby": `caption-${line.currency}` },
          h("table", { class: "report" },
            h("caption", { id: `caption-${line.currency}` }, t("reportTable", { currency: line.currency })),
            h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("category")), months.map((month) => h("th", { scope: "col" }, monthName(month, "short"))))),
            h("tbody", {},
              categories.map((c) => row(c.name ?? t("noCategory"), c.expense)),
              row(t("expense"), line.expense, "total"), row(t("income"), line.income, "total"), row(t("net"), line.net, "total"),
              worth.some((value) => value !== null) ? row(t("netWorth"), worth, "total") : null))));
    });
    replace(main, h("h1", {}, t("reports")), sections.length ? sections : h("p", { class: "muted" }, t("noReport")), yearInReview(year));
  }
  await draw();
  return { refresh: draw };
}

// The year in review, per currency: income and spending against the year before, the busiest
// month, where the money went (with each category's share) and the largest expenses.
function yearInReview(year) {
  const start = new Map(year.netWorth.start.map((total) => [total.currency, total.balance]));
  return h("section", { class: "card", "aria-labelledby": "year-in-review" },
    h("h2", { id: "year-in-review" }, t("yearInReview", { year: year.year })),
    year.currencies.length ? year.currencies.map((entry) => {
      const cur = entry.currency;
      const worth = year.netWorth.end.find((total) => total.currency === cur);
      return h("div", { class: "year" },
        year.currencies.length > 1 ? h("h3", {}, cur) : null,
        h("dl", { class: "year-totals" },
          h("dt", {}, t("yearIncome")), h("dd", { class: "income" }, money(entry.income, cur), " ",
            h("span", { class: "muted" }, t("yearBefore", { amount: money(entry.previous.income, cur) }))),
          h("dt", {}, t("yearSpending")), h("dd", { class: "expense" }, money(entry.expense, cur), " ",
            h("span", { class: "muted" }, t("yearBefore", { amount: money(entry.previous.expense, cur) }))),
          h("dt", {}, t("net")), h("dd", {}, money(entry.net, cur))),
        entry.busiestMonth ? h("p", {}, t("busiestMonth", { month: monthName(entry.busiestMonth.month), amount: money(entry.busiestMonth.expense, cur) })) : null,
        worth ? h("p", {}, t("netWorthYear", { start: money(start.get(cur) ?? 0, cur), end: money(worth.balance, cur) })) : null,
        entry.topCategories.length ? [h("h3", {}, t("whereItWent")),
          h("ul", { class: "settle" }, entry.topCategories.map((c) => h("li", {},
            h("span", {}, c.name ?? t("noCategory")),
            h("span", { class: "account-balance" }, money(c.expense, cur), c.share === null ? "" : ` · ${c.share}%`))))] : null,
        entry.largest.length ? [h("h3", {}, t("largestExpenses")),
          h("ul", { class: "settle" }, entry.largest.map((e) => h("li", {},
            h("a", { href: `#/expenses/id/${e.id}` }, `${e.date.slice(0, 10)} ${e.payee ?? ""}`),
            h("span", { class: "account-balance" }, money(e.amount, cur)))))] : null);
    }) : h("p", { class: "muted" }, t("noYear")));
}
