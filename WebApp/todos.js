// To-dos and challenges. A challenge has one check per day from its start date: shown as a
// calendar grid with the current streak, and today's check is one tap.
// Route: #/todos

import { api } from "./api.js";
import { clearErrors, deleteButton, field, h, replace, showError } from "./dom.js";
import { day, t } from "./i18n.js";

const DAY = 86_400_000;

// Today in this browser's time zone, as YYYY-MM-DD.
function localToday() {
  return new Date(Date.now() - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 10);
}

const utc = (date) => Date.parse(`${date.slice(0, 10)}T00:00:00Z`);

// Which check (day number from the start) today is; null without a start date.
export function todayIndex(todo, today = localToday()) {
  return todo.startDate ? Math.round((utc(today) - utc(todo.startDate)) / DAY) : null;
}

export async function render(main, { session, announce, stillShown }) {

  async function draw() {
    const { items } = await api("/v1/todos");
    if (!stillShown()) return;
    const open = Boolean(main.querySelector("details.adder")?.open);
    replace(main, h("h1", {}, t("todos")),
      session.canWrite ? h("details", { class: "card adder", open }, h("summary", {}, `+ ${t("addTodo")}`), addForm()) : h("p", { class: "muted" }, session.readOnlyNote),
      items.length ? h("ul", { class: "todos" }, items.map(todoItem)) : h("p", { class: "card muted" }, t("noTodos")));
  }

  async function change(todo, body) {
    try {
      await api(`/v1/todos/${encodeURIComponent(todo.id)}`, { method: "PATCH", body });
      announce(t("saved"));
      await draw();
    } catch (error) {
      main.prepend(h("p", { class: "form-error", role: "alert" }, error.message));
    }
  }

  function todoItem(todo) {
    const index = todayIndex(todo);
    const completed = h("input", { type: "checkbox", id: `done-${todo.id}`, checked: todo.isCompleted, disabled: !session.canWrite,
      onchange: (event) => change(todo, { isCompleted: event.target.checked }) });
    return h("li", { class: "card todo" },
      h("div", { class: "todo-head" },
        h("h2", {}, todo.title),
        h("span", { class: "check" }, completed, h("label", { for: `done-${todo.id}` }, t("completed")))),
      todo.memo ? h("p", {}, todo.memo) : null,
      // A challenge's streaks as the service counts them (its day: docs/WEBAPP.md).
      h("p", { class: "muted" }, t("progress", { p: todo.percentage }),
        todo.streaks ? ` · ${t("streak", { n: todo.streaks.current })} · ${t("longest", { n: todo.streaks.longest })} · ${t("rate", { p: todo.streaks.completionRate })}` : null),
      todo.isChallenge && todo.startDate ? challenge(todo, index) : null,
      session.canWrite ? h("div", { class: "actions" },
        deleteButton(todo.title, announce, async () => { await api(`/v1/todos/${encodeURIComponent(todo.id)}`, { method: "DELETE" }); announce(t("deleted")); await draw(); },
          (error) => main.prepend(h("p", { class: "form-error", role: "alert" }, error.message)))) : null);
  }

  function challenge(todo, index) {
    const start = utc(todo.startDate);
    const cells = todo.checks.map((checked, i) => {
      const date = new Date(start + i * DAY).toISOString().slice(0, 10);
      // Seen: the day of the month; heard: the date, whether it is done, and "today".
      const label = t(checked ? "dayChecked" : "dayOpen", { date: day(date) }) + (i === index ? ` (${t("today")})` : "");
      return h("li", { class: ["day", checked ? "checked" : "", i === index ? "today" : ""].join(" "), title: label },
        h("span", { "aria-hidden": "true" }, String(Number(date.slice(8, 10)))), h("span", { class: "visually-hidden" }, label));
    });
    // Blank cells so the first day sits under its weekday (Monday first).
    const lead = (new Date(start).getUTCDay() + 6) % 7;
    const canTick = session.canWrite && index !== null && index >= 0 && index < todo.checks.length;
    const checkedToday = canTick && todo.checks[index];
    return h("div", { class: "challenge" },
      h("ol", { class: "calendar", "aria-label": `${t("checks")}: ${todo.title}` },
        Array.from({ length: lead }, () => h("li", { class: "day blank", "aria-hidden": "true" })), cells),
      canTick ? h("button", { type: "button", id: `tick-${todo.id}`, class: checkedToday ? "quiet" : "primary", "aria-pressed": String(checkedToday),
        onclick: () => {
          const checks = todo.checks.slice();
          checks[index] = !checks[index];
          change(todo, { checks });
        } }, checkedToday ? `✓ ${t("checkedToday")}` : t("checkToday")) : null);
  }

  function addForm() {
    const title = h("input", { id: "todo-title", name: "title", type: "text", required: true, autocomplete: "off" });
    const isChallenge = h("input", { id: "todo-challenge", name: "isChallenge", type: "checkbox" });
    const start = h("input", { id: "todo-start", name: "startDate", type: "date", value: localToday() });
    const days = h("input", { id: "todo-days", name: "checks", type: "number", min: 1, max: 366, value: 30 });
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const form = h("form", { class: "inline-form", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      clearErrors(form);
      const body = { title: title.value.trim(), isChallenge: isChallenge.checked };
      if (isChallenge.checked) {
        const count = Number(days.value);
        body.startDate = start.value;
        body.checks = Number.isInteger(count) && count > 0 ? Array(count).fill(false) : days.value;
        if (Number.isInteger(count) && count > 0 && start.value) body.endDate = new Date(utc(start.value) + (count - 1) * DAY).toISOString().slice(0, 10);
      }
      try {
        await api("/v1/todos", { method: "POST", body });
        announce(t("saved"));
        await draw();
        window.dispatchEvent(new Event("tally:idle"));
      } catch (e) { showError(form, error, e); }
    } }, field(t("title"), title),
      h("div", { class: "check" }, isChallenge, h("label", { for: "todo-challenge" }, t("challenge"))),
      h("div", { class: "row" }, field(t("startDate"), start), field(t("days"), days)),
      error, h("button", { type: "submit", class: "primary" }, t("addTodo")));
    return form;
  }

  await draw();
  // Busy while a new to-do's title is being typed (a refresh would wipe it).
  return { refresh: draw, isBusy: () => Boolean(main.querySelector("#todo-title")?.value.trim()) };
}
