// Reports: the last 12 months — spending per category per month, income against spending,
// and the net worth at each month's end — as a bar chart and as a table (the numbers a
// screen reader reads). Route: #/reports

import { api, query } from "./api.js";
import { monthBars } from "./charts.js";
import { h, replace } from "./dom.js";
import { money, monthName, t } from "./i18n.js";

export async function render(main, { stillShown }) {
  async function draw() {
    const report = await api(`/v1/reports/months${query({ months: 12 })}`);
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
    replace(main, h("h1", {}, t("reports")), sections.length ? sections : h("p", { class: "muted" }, t("noReport")));
  }
  await draw();
  return { refresh: draw };
}
