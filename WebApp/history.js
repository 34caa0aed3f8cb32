// History: an entity's audit trail (who, when, what changed, from which replica) and the
// conflict journal (what a sync overwrote, with both values).
// Routes: #/history (the journal), #/history/ID (one entity's trail and conflicts)

import { api, query } from "./api.js";
import { field, h, replace } from "./dom.js";
import { moment, t } from "./i18n.js";

const UUID = /^[0-9a-fA-F-]{36}$/;

// A stamp "millis.counter" as a time.
const stampTime = (hlc) => moment(new Date(Number(String(hlc).split(".")[0])).toISOString());

// A property's value as text.
function show(value) {
  if (value === null) return "∅";
  if (Array.isArray(value)) return value.map((v) => (typeof v === "boolean" ? (v ? "✓" : "·") : String(v))).join(typeof value[0] === "boolean" ? "" : ", ");
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

export async function render(main, { params, session, stillShown }) {
  const id = UUID.test(params[0] ?? "") ? params[0].toLowerCase() : null;
  const replicaName = (origin) => (origin === session.replicaId ? `${t("thisReplica")} (${origin.slice(0, 8)})` : `${t("replica")} ${origin.slice(0, 8)}`);

  async function draw() {
    const [trail, journal, categories] = await Promise.all([
      id ? api(`/v1/audit/${encodeURIComponent(id)}`).catch((error) => (error.status === 404 ? null : Promise.reject(error))) : null,
      api(`/v1/conflicts${query({ entity: id })}`),
      api("/v1/categories"),
    ]);
    // A category reference reads better as its name.
    const names = new Map(categories.items.map((c) => [c.id, c.name]));
    const valueOf = (name, value) => ((name === "categoryId" || name === "parentId") && names.has(value) ? `${names.get(value)} (${value.slice(0, 8)})` : show(value));
    if (!stillShown()) return;
    const input = h("input", { id: "history-id", type: "text", value: id ?? "", autocomplete: "off", spellcheck: "false" });
    const lookup = h("form", { class: "card inline-form", role: "search", "aria-label": t("entityId"), onsubmit: (event) => {
      event.preventDefault();
      if (UUID.test(input.value.trim())) location.hash = `#/history/${input.value.trim()}`;
    } }, field(t("entityId"), input), h("button", { type: "submit" }, t("show")));

    const trailSection = id ? h("section", { class: "card", "aria-labelledby": "trail" },
      h("h2", { id: "trail" }, `${t("auditTrail")} · ${id.slice(0, 8)}`),
      !trail ? h("p", { class: "muted" }, t("noEvents")) : [
        trail.mergedInto ? h("p", { class: "note" }, t("mergedNote", { id: trail.mergedInto.categoryId.slice(0, 8), reason: trail.mergedInto.reason })) : null,
        h("ol", { class: "trail", reversed: true }, trail.events.slice().reverse().map((event) => h("li", {},
          h("p", {}, h("strong", {}, t(event.operation === "create" ? "created" : event.operation === "delete" ? "deletedOp" : "updated")),
            ` · ${moment(event.time)} · ${event.actor} · `, h("span", { class: "muted" }, `${replicaName(event.origin)} #${event.sequence}`)),
          Object.keys(event.properties).length ? h("dl", { class: "changes" },
            Object.entries(event.properties).map(([name, value]) => [h("dt", {}, name), h("dd", {}, valueOf(name, value))])) : null))),
      ]) : null;

    const journalSection = h("section", { class: "card", "aria-labelledby": "journal" },
      h("h2", { id: "journal" }, t("conflicts")),
      journal.items.length ? h("div", { class: "table-scroll" }, h("table", {},
        h("thead", {}, h("tr", {}, [t("entityId"), t("property"), t("won"), t("lost")].map((label) => h("th", { scope: "col" }, label)))),
        h("tbody", {}, journal.items.slice(-200).reverse().map((c) => h("tr", {},
          h("td", {}, h("a", { href: `#/history/${c.entityId}` }, `${c.entityType} ${c.entityId.slice(0, 8)}`)),
          h("td", {}, c.property),
          h("td", {}, show(c.winningValue), h("br"), h("span", { class: "muted" }, `${replicaName(c.winnerOrigin)} · ${stampTime(c.winnerHlc)}`)),
          h("td", {}, show(c.losingValue), h("br"), h("span", { class: "muted" }, `${replicaName(c.loserOrigin)} · ${stampTime(c.loserHlc)}`)))))))
        : h("p", { class: "muted" }, t("noConflicts")));

    replace(main, h("h1", {}, t("history")), lookup, trailSection, journalSection);
  }

  await draw();
  return { refresh: draw, isBusy: () => document.activeElement?.id === "history-id" };
}
