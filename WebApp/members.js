// The household's members: who may sign in, and their roles. An owner makes one-time
// invitation links (7 days) and removes members; everyone sees who is in.
// Route: #/members

import { api, ledger, query } from "./api.js";
import { deleteButton, field, h, replace } from "./dom.js";
import { t } from "./i18n.js";

export async function render(main, { session, announce, stillShown }) {
  const isOwner = session.role === "owner";
  let invitation = null;  // the last link made, shown until the screen is left

  async function draw() {
    const { items } = await api("/v1/members");
    if (!stillShown()) return;
    const role = h("select", { id: "invite-role" }, ["member", "read-only", "owner"].map((r) => h("option", { value: r }, t(`role_${r}`))));
    replace(main, h("h1", {}, t("members")),
      h("section", { class: "card", "aria-labelledby": "member-list" },
        h("h2", { id: "member-list" }, session.household ? `${t("household")} ${session.household}` : t("members")),
        items.length
          ? h("ul", { class: "members" }, items.map((member) => h("li", {},
            h("span", { class: "member-name" }, member.name), " ", h("span", { class: "muted" }, t(`role_${member.role}`)),
            isOwner && member.name !== session.member
              ? deleteButton(member.name, announce, async () => { await api(`/v1/members${query({ name: member.name })}`, { method: "DELETE" }); announce(t("deleted")); await draw(); },
                (error) => announce(error.message))
              : null)))
          : h("p", { class: "muted" }, t("noMembers"))),
      isOwner ? h("section", { class: "card", "aria-labelledby": "invite" },
        h("h2", { id: "invite" }, t("invite")),
        h("form", { class: "invite-form", onsubmit: async (event) => {
          event.preventDefault();
          try {
            const made = await api("/v1/members/invites", { method: "POST", body: { role: role.value } });
            const place = ledger() ? `${ledger()}/` : "";
            invitation = { link: `${location.origin}/#/join/${place}${made.code}`, expiresAt: made.expiresAt };
            announce(t("inviteMade"));
          } catch (error) { announce(error.message); }
          await draw();
        } }, field(t("inviteRole"), role), h("button", { type: "submit", class: "primary" }, t("makeInvite"))),
        invitation ? h("div", { class: "invitation" }, h("p", {}, t("inviteOnce")),
          h("input", { id: "invite-link", type: "text", readonly: true, value: invitation.link, "aria-label": t("inviteLink") })) : null)
        : null);
  }
  await draw();
  return { refresh: draw };
}
