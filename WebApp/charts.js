// Charts drawn as SVG by hand (a few dozen lines instead of a library): horizontal bars for
// spending by group, each a button when it can be drilled into, and a months bar chart whose
// bars link to their month. Sizes are SVG attributes, so the page needs no inline style.

import { h, s } from "./dom.js";
import { money, monthName, t } from "./i18n.js";

// groups: [{key, label, amount, currency}] of one currency, largest first. With `onSelect`,
// a group for which `canSelect(group)` holds is a button that calls it.
export function groupBars(groups, { onSelect, canSelect = () => true, label } = {}) {
  const largest = Math.max(1, ...groups.map((group) => group.amount ?? 0));
  return h("ul", { class: "bars", "aria-label": label },
    groups.map((group) => {
      const share = Math.max(0.5, ((group.amount ?? largest) / largest) * 100);
      const content = [
        h("span", { class: "bar-label" }, group.label),
        h("span", { class: "bar-amount" }, money(group.amount, group.currency)),
        s("svg", { class: "bar", viewBox: "0 0 100 6", preserveAspectRatio: "none", "aria-hidden": "true", focusable: "false" },
          s("rect", { x: 0, y: 0, width: share.toFixed(2), height: 6, rx: 1 })),
      ];
      const selectable = onSelect && canSelect(group);
      return h("li", {}, selectable
        ? h("button", { type: "button", class: "bar-row", onclick: () => onSelect(group) }, content)
        : h("div", { class: "bar-row" }, content));
    }));
}

// budgets: [{label, budgeted, spent, remaining, over, currency}] from the summary. Each a row:
// spent against budgeted as a bar (capped at the budget; over is marked in words and colour),
// with `onDelete(budget)` making the control that deletes it.
export function budgetBars(budgets, { label, onDelete } = {}) {
  return h("ul", { class: "bars budgets", "aria-label": label }, budgets.map((b) => {
    const share = b.budgeted > 0 && b.spent !== null ? Math.min(100, (b.spent / b.budgeted) * 100) : 100;
    const state = b.over ? t("overBy", { amount: money(b.remaining === null ? null : -b.remaining, b.currency) })
      : t("left", { amount: money(b.remaining, b.currency) });
    return h("li", { class: b.over ? "over" : null },
      h("div", { class: "bar-row" },
        h("span", { class: "bar-label" }, b.label),
        h("span", { class: "bar-amount" }, `${money(b.spent, b.currency)} / ${money(b.budgeted, b.currency)}`),
        s("svg", { class: "bar", viewBox: "0 0 100 6", preserveAspectRatio: "none", "aria-hidden": "true", focusable: "false" },
          s("rect", { class: "track", x: 0, y: 0, width: 100, height: 6, rx: 1 }),
          s("rect", { x: 0, y: 0, width: Math.max(0.5, share).toFixed(2), height: 6, rx: 1 })),
        h("span", { class: "budget-state" }, state),
        onDelete ? onDelete(b) : null));
  }));
}

// months: [{month, expense, income}] oldest first (one currency); the bar of `current` is marked.
export function monthBars(months, { currency, current, label, hrefOf }) {
  const width = 28, gap = 8, height = 120, top = 8;
  const largest = Math.max(1, ...months.map((m) => m.expense ?? 0));
  const chartWidth = months.length * (width + gap);
  return s("svg", { class: "months", viewBox: `0 0 ${chartWidth} ${height + 24}`, role: "group", "aria-label": label },
    months.map((m, index) => {
      const barHeight = Math.max(1, ((m.expense ?? largest) / largest) * height);
      const x = index * (width + gap);
      const name = `${monthName(m.month)}: ${money(m.expense, currency)}`;
      return s("a", { href: hrefOf(m.month), "aria-label": name, class: m.month === current ? "current" : null },
        s("title", {}, name),
        s("rect", { x, y: top + height - barHeight, width, height: barHeight, rx: 2 }),
        s("text", { x: x + width / 2, y: top + height + 14, "text-anchor": "middle" }, m.month.slice(5)));
    }));
}
