// Categories: the tree (nested lists, so a screen reader hears the nesting); add, rename,
// move and delete; and the duplicates that replicas made apart and the views merged (by name
// and parent), each with the category it stands under.
// Route: #/categories

import { api } from "./api.js";
import { clearErrors, deleteButton, field, h, maxNesting, replace, showError } from "./dom.js";
import { t } from "./i18n.js";
import { categoryOptions } from "./expenses.js";

export async function render(main, { session, announce, stillShown }) {
  // The id whose edit form is open, and that form: a redraw (a live refresh that was already
  // under way when the form opened) puts the same form back, with what was typed in it.
  let editing = null, editor = null, adder = null;
  const closeEditor = () => { editing = null; editor = null; };

  async function draw() {
    const { items, merged } = await api("/v1/categories");
    if (!stillShown()) return;
    const byId = new Map(items.map((c) => [c.id, c]));
    const open = Boolean(main.querySelector("details.adder")?.open);
    replace(main,
      h("h1", {}, t("categories")),
      session.canWrite
        ? h("details", { class: "card adder", open }, h("summary", {}, `+ ${t("addCategory")}`), adder ??= addForm())
        : h("p", { class: "muted" }, session.readOnlyNote),
      items.length ? tree(items) : h("p", { class: "card muted" }, t("noCategories")),
      h("section", { class: "card", "aria-labelledby": "merged" },
        h("h2", { id: "merged" }, t("merged")),
        merged.length
          ? h("ul", { class: "merged" }, merged.map((m) => h("li", {},
              h("a", { href: `#/history/${m.id}` }, `${byId.get(m.mergedInto)?.name ?? "?"} · ${m.id.slice(0, 8)}`), " ",
              h("strong", {}, t("mergedInto", { name: `${byId.get(m.mergedInto)?.name ?? "?"} (${m.mergedInto.slice(0, 8)})` })),
              h("span", { class: "muted" }, ` — ${m.reason}`))))
          : h("p", { class: "muted" }, t("noMerges"))));
    // The add form's parent list follows the tree.
    adder?.querySelector("#category-parent")?.replaceChildren(...categoryOptions(items, adder.querySelector("#category-parent").value, { none: t("topLevel") }).flat());
  }

  // Kept across redraws (see `editor`): a half-typed new category survives a live refresh.
  function addForm() {
    const name = h("input", { id: "category-name", name: "name", type: "text", required: true, autocomplete: "off" });
    const parent = h("select", { id: "category-parent", name: "parentId" }, categoryOptions([], null, { none: t("topLevel") }));
    const kind = h("select", { id: "category-kind", name: "kind" },
      h("option", { value: "expense" }, t("expenseKind")), h("option", { value: "income" }, t("incomeKind")));
    const icon = h("input", { id: "category-icon", name: "icon", type: "text", autocomplete: "off", maxlength: 8 });
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const form = h("form", { class: "inline-form", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      try {
        await api("/v1/categories", { method: "POST", body: { name: name.value.trim(), parentId: parent.value || null, kind: kind.value, icon: icon.value.trim() || null } });
        name.value = icon.value = "";
        announce(t("saved"));
        await draw();
        name.focus();
      } catch (e) { showError(form, error, e); }
    } }, field(t("name"), name), field(t("parent"), parent), field(t("kind"), kind), field(t("icon"), icon),
      error, h("button", { type: "submit", class: "primary" }, t("addCategory")));
    return form;
  }

  // The tree as nested lists, from the server's order (each category, then those under it,
  // depth first) and depths: built with a stack, not by recursion, and nested at most
  // `maxNesting` deep — deeper ones are listed, in order, at the deepest level shown. Nothing
  // bounds how deep a chain of categories goes (a member's writes, a peer's events): a chain
  // 2,500 deep overflowed the call stack, and at 1,500 the layout killed the tab (found by
  // review). Categories caught in a cycle by concurrent moves come last, at the top level.
  function tree(items) {
    const top = h("ul", { class: "tree card", "aria-label": t("categories") });
    const lists = [top];  // lists[k]: where an item at level k goes (lists[k] is inside last[k - 1])
    const last = [];      // last[k]: the item put at level k last
    for (const category of items) {
      const level = Math.min(category.depth, maxNesting, last.length);
      lists.length = Math.min(lists.length, level + 1);
      if (!lists[level]) last[level - 1].append(lists[level] = h("ul", { class: "subtree" }));
      lists[level].append(last[level] = categoryItem(category, items));
      last.length = level + 1;
    }
    return top;
  }

  function categoryItem(category, items) {
    const label = h("span", { class: "category-name" }, `${category.icon ? category.icon + " " : ""}${category.name}`,
      category.kind === "income" ? h("span", { class: "badge" }, t("incomeKind")) : null);
    if (!session.canWrite) return h("li", {}, h("div", { class: "category" }, label));
    if (editing === category.id) return h("li", {}, editor ??= editForm(category, items));
    return h("li", {}, h("div", { class: "category" }, label,
      h("span", { class: "item-actions" },
        h("button", { type: "button", class: "quiet", id: `edit-${category.id}`, "aria-label": `${t("rename")}: ${category.name}`,
          onclick: () => { closeEditor(); editing = category.id; draw(); } }, t("rename")),
        deleteButton(category.name, announce, async () => { await api(`/v1/categories/${encodeURIComponent(category.id)}`, { method: "DELETE" }); announce(t("deleted")); await draw(); },
          (error) => alertIn(main, error)))));
  }

  function editForm(category, items) {
    const id = category.id.slice(0, 8);
    const name = h("input", { id: `edit-${id}-name`, name: "name", type: "text", value: category.name, required: true });
    const parent = h("select", { id: `edit-${id}-parent`, name: "parentId" }, categoryOptions(items, category.parentId, { none: t("topLevel"), exclude: category.id }));
    const icon = h("input", { id: `edit-${id}-icon`, name: "icon", type: "text", value: category.icon ?? "", maxlength: 8 });
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const form = h("form", { class: "inline-form", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      try {
        await api(`/v1/categories/${encodeURIComponent(category.id)}`, { method: "PATCH", body: { name: name.value.trim(), parentId: parent.value || null, icon: icon.value.trim() || null } });
        closeEditor();
        announce(t("saved"));
        await draw();
        window.dispatchEvent(new Event("tally:idle"));
      } catch (e) { showError(form, error, e); }
    } }, field(t("name"), name), field(`${t("move")}: ${t("parent")}`, parent), field(t("icon"), icon), error,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, t("save")),
        h("button", { type: "button", class: "quiet", onclick: () => { closeEditor(); draw(); window.dispatchEvent(new Event("tally:idle")); } }, t("cancel"))));
    setTimeout(() => name.focus());
    return form;
  }

  await draw();
  // Busy while a category is being edited, or a new one's name is being typed.
  return { refresh: draw, isBusy: () => editing !== null || Boolean(adder?.querySelector("#category-name")?.value.trim()) };
}

function alertIn(main, error) {
  main.prepend(h("p", { class: "form-error", role: "alert" }, error.message));
}
