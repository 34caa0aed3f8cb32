// Import a bank or card statement: choose the file, see what it would create (a dry run:
// rows, those already in the ledger, skipped and unreadable rows), then import it. Each
// transaction is created once however often the file is imported. Route: #/import

import { api } from "./api.js";
import { field, h, replace } from "./dom.js";
import { day, money, moment, t } from "./i18n.js";

const layouts = ["", "samsung-card", "shinhan-card", "kb-card", "hyundai-card", "kb-bank", "shinhan-bank", "tally-export", "generic"];

export async function render(main, { session, announce, stillShown, navigate }) {
  let busy = false;

  async function draw() {
    const { items } = await api("/v1/imports");
    if (!stillShown()) return;
    replace(main, h("h1", {}, t("importTitle")),
      session.canWrite ? form() : h("p", { class: "muted" }, session.readOnlyNote),
      h("section", { class: "card", "aria-labelledby": "imports-title" }, h("h2", { id: "imports-title" }, t("pastImports")),
        items.length ? h("ul", { class: "imports" }, items.map((item) => h("li", {},
          h("a", { href: `#/history/${item.id}` }, item.fileName), ` · ${t("importedCount", { n: item.count })} · ${item.format}`)))
          : h("p", { class: "muted" }, t("noImports"))));
  }

  function form() {
    const file = h("input", { id: "import-file", name: "file", type: "file", accept: ".csv,.xlsx,.ofx,.qfx,text/csv", required: true });
    const layout = h("select", { id: "import-layout", name: "mapping" }, layouts.map((name) => h("option", { value: name }, name || t("recognise"))));
    const account = h("input", { id: "import-account", name: "account", type: "text", autocomplete: "off", maxlength: 64 });
    const skipBad = h("input", { id: "import-skip-bad", name: "skipBadRows", type: "checkbox" });
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const preview = h("div", { id: "import-preview", "aria-live": "polite" });

    const query = (dryRun) => {
      const chosen = file.files[0];
      const parts = [`name=${encodeURIComponent(chosen.name)}`, `dryRun=${dryRun}`];
      if (layout.value) parts.push(`mapping=${encodeURIComponent(layout.value)}`);
      if (account.value.trim()) parts.push(`account=${encodeURIComponent(account.value.trim())}`);
      if (skipBad.checked) parts.push("skipBadRows=true");
      return `/v1/imports?${parts.join("&")}`;
    };
    const send = async (dryRun) => {
      const chosen = file.files[0];
      if (!chosen) { error.textContent = t("chooseFile"); error.hidden = false; file.focus(); return null; }
      error.hidden = true;
      busy = true;
      try {
        return await api(query(dryRun), { method: "POST", body: chosen, headers: { "Content-Type": chosen.type || "application/octet-stream" } });
      } catch (failure) {
        error.textContent = failure.message;
        error.hidden = false;
        if (failure.rows) preview.replaceChildren(badRows(failure.rows));
        return null;
      } finally {
        busy = false;
      }
    };

    const showPreview = (report) => {
      const importButton = h("button", { type: "button", class: "primary", disabled: report.created.length === 0 || (report.bad.length > 0 && !skipBad.checked),
        onclick: async () => {
          const done = await send(false);
          if (!done) return;
          announce(t("importDone", { n: done.created.length }));
          await draw();  // a new form, and the import among the past ones
          main.querySelector("#import-preview")?.replaceChildren(h("p", { role: "status" }, t("importDone", { n: done.created.length }), " ",
            h("a", { href: "#/expenses" }, t("expenses"))));
        } }, t("importRows", { n: report.created.length }));
      preview.replaceChildren(
        h("p", {}, t("previewSummary", { create: report.created.length, duplicates: report.duplicates.length, skipped: report.skipped.length, bad: report.bad.length })),
        h("p", { class: "muted" }, report.layouts.map((l) => (l.sheet ? `${l.sheet}: ${l.layout}` : l.layout)).join(", ") + (report.encoding ? ` · ${report.encoding}` : "")),
        report.created.length ? h("div", { class: "table-wrap" }, h("table", { class: "preview" },
          h("thead", {}, h("tr", {}, [t("date"), t("payee"), t("amount"), t("kind")].map((name) => h("th", { scope: "col" }, name)))),
          h("tbody", {}, report.created.slice(0, 200).map((row) => h("tr", {},
            h("td", {}, day(row.date)), h("td", {}, row.payee ?? ""), h("td", { class: "number" }, money(row.amount, row.currency)),
            h("td", {}, row.refund ? t("refund") : t(row.kind === "income" ? "incomeKind" : "expenseKind"))))))) : null,
        report.bad.length ? badRows(report.bad) : null,
        h("p", { class: "actions" }, importButton));
    };

    const previewButton = h("button", { type: "submit" }, t("preview"));
    return h("form", { class: "card inline-form", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      const report = await send(true);
      if (report) showPreview(report);
    } },
      field(t("statementFile"), file, t("statementHint")), field(t("layout"), layout), field(t("account"), account, t("accountHint")),
      h("label", { class: "check" }, skipBad, ` ${t("skipBadRows")}`), error, h("p", { class: "actions" }, previewButton), preview);
  }

  function badRows(rows) {
    return h("div", { class: "bad-rows" }, h("h2", {}, t("badRows")),
      h("ul", {}, rows.slice(0, 100).map((row) => h("li", {}, `${row.sheet ? `${row.sheet} · ` : ""}${t("rowNumber", { n: row.row })}: ${row.reason}`))));
  }

  await draw();
  return { refresh: draw, isBusy: () => busy || Boolean(main.querySelector("#import-preview")?.childElementCount) };
}
