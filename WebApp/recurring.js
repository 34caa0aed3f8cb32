// Recurring entries: each rule with its next occurrences; add one (its occurrences up to today
// appear at once, as ordinary expenses), skip the next occurrence, end it today, delete it.
// Route: #/recurring

import { api } from "./api.js";
import { clearErrors, deleteButton, field, h, replace, showError } from "./dom.js";
import { day, money, t, toMinorUnits } from "./i18n.js";
import { categoryOptions } from "./expenses.js";

const localToday = () => new Date(Date.now() - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 10);

export async function render(main, { session, announce, stillShown }) {
  async function draw() {
    const [{ items }, categories] = await Promise.all([api("/v1/recurring"), api("/v1/categories")]);
    if (!stillShown()) return;
    const open = Boolean(main.querySelector("details.adder")?.open);
    replace(main, h("h1", {}, t("recurring")),
      session.canWrite ? h("details", { class: "card adder", open }, h("summary", {}, `+ ${t("addRule")}`), ruleForm(categories.items))
        : h("p", { class: "muted" }, session.readOnlyNote),
      items.length ? h("ul", { class: "rules" }, items.map(ruleItem)) : h("p", { class: "card muted" }, t("noRules")));
  }

  async function act(request) {
    try { await request(); announce(t("saved")); await draw(); } catch (error) { main.prepend(h("p", { class: "form-error", role: "alert" }, error.message)); }
  }

  function ruleItem(rule) {
    const title = rule.payee || rule.memo || t(rule.cadence);
    const ended = rule.endDate ? ` · ${t("until", { date: day(rule.endDate) })}` : rule.count ? ` · ${t("times", { n: rule.count })}` : "";
    return h("li", { class: "card rule" },
      h("h2", {}, title),
      h("p", {}, `${t(rule.cadence)} · ${money(rule.amount, rule.currency)} · ${t("from", { date: day(rule.startDate) })}${ended}`),
      h("p", { class: "muted" }, rule.next.length ? `${t("nextOccurrences")}: ${rule.next.map((d) => day(d)).join(", ")}` : t("noMore")),
      session.canWrite ? h("div", { class: "actions" },
        rule.next.length ? h("button", { type: "button", onclick: () => act(() => api(`/v1/recurring/${encodeURIComponent(rule.id)}/skip`, { method: "POST", body: { date: rule.next[0] } })) },
          `${t("skip")} ${day(rule.next[0])}`) : null,
        !rule.endDate || rule.endDate.slice(0, 10) > localToday()
          ? h("button", { type: "button", onclick: () => act(() => api(`/v1/recurring/${encodeURIComponent(rule.id)}`, { method: "PATCH", body: { endDate: localToday() } })) }, t("endToday"))
          : null,
        deleteButton(title, announce, () => act(() => api(`/v1/recurring/${encodeURIComponent(rule.id)}`, { method: "DELETE" })),
          (error) => main.prepend(h("p", { class: "form-error", role: "alert" }, error.message)))) : null);
  }

  function ruleForm(categories) {
    const cadence = h("select", { id: "rule-cadence", name: "cadence" }, ["monthly", "weekly", "daily", "yearly"].map((c) => h("option", { value: c }, t(c))));
    const start = h("input", { id: "rule-start", name: "startDate", type: "date", value: localToday() });
    const amount = h("input", { id: "rule-amount", name: "amount", type: "text", inputmode: "decimal", autocomplete: "off" });
    const currency = h("select", { id: "rule-currency", name: "currency" }, ["KRW", "USD", "EUR", "JPY"].map((c) => h("option", { value: c }, c)));
    const payee = h("input", { id: "rule-payee", name: "payee", type: "text", autocomplete: "off", maxlength: 64 });
    const category = h("select", { id: "rule-category", name: "categoryId" }, categoryOptions(categories, null));
    const monthEnd = h("select", { id: "rule-month-end", name: "monthEnd" }, h("option", { value: "clamp" }, t("clamp")), h("option", { value: "skip" }, t("skipMonth")));
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const form = h("form", { class: "inline-form", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      const body = { cadence: cadence.value, startDate: start.value, currency: currency.value, monthEnd: monthEnd.value,
        amount: toMinorUnits(amount.value, currency.value) ?? amount.value, payee: payee.value.trim() || null, categoryId: category.value || null };
      try {
        await api("/v1/recurring", { method: "POST", body });
        amount.value = payee.value = "";
        announce(t("saved"));
        await draw();
      } catch (e) { showError(form, error, e); }
    } }, field(t("cadence"), cadence), field(t("startDate"), start),
      h("div", { class: "row" }, field(t("amount"), amount), field(t("currency"), currency)),
      field(t("payee"), payee), field(t("category"), category), field(t("monthEnd"), monthEnd, t("monthEndHint")),
      error, h("button", { type: "submit", class: "primary" }, t("addRule")));
    return form;
  }

  await draw();
  return { refresh: draw, isBusy: () => Boolean(main.querySelector("#rule-amount")?.value.trim()) };
}
