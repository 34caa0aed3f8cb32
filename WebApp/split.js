// Split receipt: one payment shared out among lines of their own categories (a ₩120,000
// supermarket receipt: groceries, household, …). The lines must add up to the payment to be
// saved; a receipt whose lines no longer add up after edits on two devices merged is shown as
// needing attention, with the difference, and is never changed by itself.
// Route: #/expenses/split/ID

import { api } from "./api.js";
import { clearErrors, h, replace, showError } from "./dom.js";
import { fromMinorUnits, money, t, toMinorUnits } from "./i18n.js";
import { categoryOptions } from "./expenses.js";

export async function splitForm(main, { session, navigate, announce, stillShown }, id) {
  const [receipt, categories] = await Promise.all([api(`/v1/expenses/${encodeURIComponent(id)}/lines`), api("/v1/categories").then((c) => c.items)]);
  if (!stillShown()) return {};
  const currency = receipt.currency;
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const remaining = h("p", { class: "split-remaining", role: "status", "aria-live": "polite" });
  const list = h("ol", { class: "split-lines" });
  const rows = [];

  // What the lines add up to against the payment, told as the person types.
  function update() {
    const total = rows.reduce((sum, row) => sum + (toMinorUnits(row.amount.value, currency) ?? 0), 0);
    const left = receipt.amount - total;
    remaining.textContent = left === 0 ? t("splitAddsUp") : left > 0 ? t("splitLeft", { amount: money(left, currency) }) : t("splitOver", { amount: money(-left, currency) });
    remaining.className = left === 0 ? "split-remaining ok" : "split-remaining expense";
  }

  function addRow(line) {
    const n = rows.length + 1;
    // No category of its own: the expense's (sent as null, so it follows the expense's). A
    // category since deleted stays chosen, named as such, until the person picks another.
    const category = h("select", { id: `line-category-${n}`, "aria-label": t("lineCategory", { n }) },
      categoryOptions(categories, line?.categoryId ?? null, { none: t("expensesOwnCategory") }),
      line?.categoryId && !categories.some((c) => c.id === line.categoryId)
        ? h("option", { value: line.categoryId, selected: true }, t("deletedCategory")) : null);
    const amount = h("input", { id: `line-amount-${n}`, inputmode: "decimal", autocomplete: "off", "aria-label": t("lineAmount", { n }),
      value: line ? fromMinorUnits(line.amount, currency) : "", oninput: update });
    const memo = h("input", { id: `line-memo-${n}`, autocomplete: "off", maxlength: 4000, "aria-label": t("lineMemo", { n }), value: line?.memo ?? "", placeholder: t("memo") });
    const row = { id: line?.id ?? null, category, amount, memo };
    const item = h("li", { class: "split-line" }, category, amount, memo,
      h("button", { type: "button", class: "quiet", "aria-label": t("removeLine", { n }), onclick: () => {
        rows.splice(rows.indexOf(row), 1);
        item.remove();
        update();
      } }, "✕"));
    rows.push(row);
    list.append(item);
    update();
    return amount;
  }

  async function save(event) {
    event.preventDefault();
    if (submit.disabled) return;  // one tap, one split
    clearErrors(form);
    const lines = rows.map((row) => ({
      ...(row.id ? { id: row.id } : {}),
      categoryId: row.category.value || null,
      amount: toMinorUnits(row.amount.value, currency) ?? row.amount.value,
      memo: row.memo.value.trim() || null,
    }));
    submit.disabled = true;
    try {
      await api(`/v1/expenses/${encodeURIComponent(id)}/lines`, { method: "PUT", body: { lines } });
      announce(t("saved"));
      navigate(`#/expenses/${receipt.date.slice(0, 7)}`);
      window.dispatchEvent(new Event("tally:idle"));
    } catch (error) { showError(form, formError, error); } finally { submit.disabled = false; }
  }
  const submit = h("button", { type: "submit", class: "primary" }, t("save"));

  for (const line of receipt.lines) addRow(line);
  if (!receipt.lines.length) { addRow(null); }
  const form = h("form", { class: "card split-form", novalidate: true, onsubmit: save, "aria-labelledby": "split-title" },
    h("p", {}, h("strong", {}, receipt.payee ?? t("expenseKind")), " · ", money(receipt.amount, currency), " · ", receipt.date.slice(0, 10)),
    receipt.needsAttention
      ? h("p", { class: "note", role: "alert" }, t("splitNeedsAttention", { assigned: money(receipt.assigned ?? 0, currency), amount: money(receipt.amount, currency) }))
      : null,
    h("p", { class: "hint" }, t("splitHint")),
    list, remaining, formError,
    session.canWrite ? h("div", { class: "actions" },
      h("button", { type: "button", class: "quiet", id: "add-line", onclick: () => addRow(null).focus() }, `+ ${t("addLine")}`),
      submit,
      receipt.lines.length ? h("button", { type: "button", class: "quiet", onclick: async () => {
        try {
          await api(`/v1/expenses/${encodeURIComponent(id)}/lines`, { method: "PUT", body: { lines: [] } });
          announce(t("saved"));
          navigate(`#/expenses/id/${id}`);
        } catch (error) { showError(form, formError, error); }
      } }, t("unsplit")) : null,
      h("a", { class: "button quiet", href: `#/expenses/id/${id}` }, t("cancel"))) : null);
  replace(main, h("h1", { id: "split-title" }, t("splitReceipt")), form);
  return { isBusy: () => true };
}
