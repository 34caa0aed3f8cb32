// Settle up: who paid and who owes — each person's balance per currency, the fewest transfers
// that settle it, and a tap that records one (a settlement). Route: #/people

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { money, t } from "./i18n.js";

export async function render(main, { session, announce, stillShown }) {
  async function draw() {
    const people = await api("/v1/people");
    if (!stillShown()) return;
    replace(main, h("h1", {}, t("people")),
      h("section", { class: "card", "aria-labelledby": "people-balances" },
        h("h2", { id: "people-balances" }, t("whoOwes")),
        people.items.length
          ? h("ul", { class: "accounts" }, people.items.map((person) => h("li", {},
            h("span", { class: "account-name" }, person.name),
            h("span", { class: person.balance < 0 ? "account-balance expense" : "account-balance" },
              person.balance < 0 ? t("owes", { amount: money(-person.balance, person.currency) })
                : person.balance > 0 ? t("isOwed", { amount: money(person.balance, person.currency) }) : t("settled")))))
          : h("p", { class: "muted" }, t("noSharing"))),
      h("section", { class: "card", "aria-labelledby": "settle-up" },
        h("h2", { id: "settle-up" }, t("settleUp")),
        people.settle.length
          ? h("ul", { class: "settle" }, people.settle.map((step) => h("li", {},
            h("span", {}, t("pays", { from: step.from, to: step.to, amount: money(step.amount, step.currency) })),
            session.canWrite ? h("button", { type: "button", class: "primary", onclick: async (event) => {
              event.currentTarget.disabled = true;  // one tap, one settlement
              try {
                await api("/v1/settlements", { method: "POST", body: { paidBy: step.from, paidTo: step.to, amount: step.amount, currency: step.currency } });
                announce(t("saved"));
                await draw();
              } catch (error) { announce(error.message); }
            } }, t("markPaid")) : null)))
          : h("p", { class: "muted" }, t("allSettled")),
        people.needsAttention.length ? h("p", { class: "note" }, t("needsAttention", { n: people.needsAttention.length })) : null));
  }
  await draw();
  return { refresh: draw };
}
