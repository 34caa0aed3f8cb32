// Sync status: this replica (its log, how far its views are behind), the events it holds per
// origin, and each peer: last sync, last error, and what the peer still lacks.
// Route: #/sync

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { moment, t } from "./i18n.js";

export async function render(main, { session, announce, stillShown }) {
  async function draw() {
    const status = await api("/v1/sync/status");
    if (!stillShown()) return;
    const row = (label, value) => [h("dt", {}, label), h("dd", {}, value)];
    replace(main, h("h1", {}, t("sync")),
      h("section", { class: "card", "aria-labelledby": "replica" },
        h("h2", { id: "replica" }, `${t("thisReplica")}: ${status.name}`),
        h("dl", { class: "details" },
          row("ID", status.replicaId), row(t("logIndex"), String(status.appendedIndex)),
          row(t("eventsBehind"), String(status.viewsBehind)), row(t("missingAttachments"), String(status.missingAttachments)))),
      h("section", { class: "card", "aria-labelledby": "peers" },
        h("h2", { id: "peers" }, t("peers")),
        status.peers.length ? h("ul", { class: "peers" }, status.peers.map((peer) => h("li", {},
          h("h3", {}, peer.name), h("p", { class: "muted" }, peer.url),
          h("dl", { class: "details" },
            row(t("lastSync"), peer.lastSuccessAt ? moment(peer.lastSuccessAt) : t("never")),
            row(t("unsent"), String(peer.unsent)),
            peer.lastError ? row(t("lastError"), `${moment(peer.lastAttemptAt)}: ${peer.lastError}`) : null),
          session.canReplicate ? h("button", { type: "button", onclick: async (event) => {
            event.target.disabled = true;
            try { await api("/v1/replication/sync", { method: "POST", body: { peer: peer.name } }); announce(t("saved")); } catch (error) { announce(error.message); }
            await draw();
          } }, `${t("syncNow")}: ${peer.name}`) : null)))
          : h("p", { class: "muted" }, t("noPeers"))),
      h("section", { class: "card", "aria-labelledby": "origins" },
        h("h2", { id: "origins" }, t("origins")),
        h("div", { class: "table-scroll" }, h("table", {},
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("replica")), h("th", { scope: "col" }, t("events")))),
          h("tbody", {}, status.origins.map((o) => h("tr", {},
            h("td", {}, o.origin === status.replicaId ? `${o.origin} (${t("thisReplica")})` : o.origin), h("td", {}, String(o.events)))))))));
  }
  await draw();
  return { refresh: draw };
}
