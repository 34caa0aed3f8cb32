// Building the page from data without innerHTML: every text a user or a peer wrote goes in
// as a text node, so it can never become markup or script.

import { t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";

// h("button", {class: "x", onclick: fn, disabled: true}, "text", child, [more]) → an element.
// Attributes whose value is null, undefined or false are left out; `true` sets them empty.
export function h(tag, props = {}, ...children) {
  return build(document.createElement(tag), props, children);
}

// The same for SVG elements.
export function s(tag, props = {}, ...children) {
  return build(document.createElementNS(SVG, tag), props, children);
}

function build(element, props, children) {
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? "" : withoutUnpairedBidi(String(value)));  // labels carry names too
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : isolatedText(element, String(child)));
  }
}

// Every text goes in isolated from what is beside it (issue 29): a <bdi> keeps the direction
// of what a person or a peer wrote — a right-to-left payee, an override left open in a payment
// method — from reordering the separators and the tags after it. Where an element holds text
// only (an <option>, SVG), there is no element to isolate with; there and inside the <bdi>,
// directional controls that are not closed in their line are dropped (events from before the
// rule that refuses them may hold some).
const TEXT_ONLY = new Set(["option", "textarea", "title", "style", "script"]);

function isolatedText(parent, text) {
  const node = document.createTextNode(withoutUnpairedBidi(text));
  if (parent.namespaceURI !== "http://www.w3.org/1999/xhtml" || TEXT_ONLY.has(parent.localName)) return node;
  const bdi = document.createElement("bdi");
  bdi.append(node);
  return bdi;
}

// `text` without the directional controls (U+202A–202E, U+2066–2069) that have no partner in
// their line: the same rule as the ledger's (BidiControls.swift).
const OPENERS = { "\u202A": "embedding", "\u202B": "embedding", "\u202D": "embedding", "\u202E": "embedding",
                  "\u2066": "isolate", "\u2067": "isolate", "\u2068": "isolate" };
const CLOSERS = { "\u202C": "embedding", "\u2069": "isolate" };
const PARAGRAPH_ENDS = "\n\r\u001C\u001D\u001E\u0085\u2029";

export function withoutUnpairedBidi(text) {
  if (!/[\u202A-\u202E\u2066-\u2069]/.test(text)) return text;
  const characters = Array.from(text);
  const open = [];
  const lonely = new Set();
  characters.forEach((character, index) => {
    if (OPENERS[character]) open.push([OPENERS[character], index]);
    else if (CLOSERS[character]) {
      if (open.length && open[open.length - 1][0] === CLOSERS[character]) open.pop();
      else lonely.add(index);
    } else if (PARAGRAPH_ENDS.includes(character)) {
      for (const [, at] of open.splice(0)) lonely.add(at);
    }
  });
  for (const [, at] of open) lonely.add(at);
  return characters.filter((_, index) => !lonely.has(index)).join("");
}

// Replaces an element's children. If the focus was inside, it goes back to the new element
// with the same id (a control redrawn by a save or a live refresh), else to `element` itself,
// so a keyboard or screen-reader user is not dropped at the top of the page.
export function replace(element, ...children) {
  const focused = element.contains(document.activeElement) ? document.activeElement.id : null;
  const hadFocus = element.contains(document.activeElement) && document.activeElement !== element;
  element.replaceChildren();
  append(element, children);
  if (hadFocus) {
    const again = focused ? element.querySelector(`#${CSS.escape(focused)}`) : null;
    (again ?? element).focus({ preventScroll: true });
  }
  return element;
}

// A labelled form field: the label, the control, and the place its error message goes
// (`aria-describedby`), so the API's message for a field shows beside it.
export function field(label, control, hint) {
  const id = control.id;
  const error = h("p", { class: "field-error", id: `${id}-error`, hidden: true });
  control.setAttribute("aria-describedby", hint ? `${id}-hint ${id}-error` : `${id}-error`);
  return h("div", { class: "field" }, h("label", { for: id }, label), control,
    hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null, error);
}

// Shows `message` beside the field whose control has id `id` (false if there is none).
export function showFieldError(form, id, message) {
  const control = form.querySelector(`#${CSS.escape(id)}`);
  const error = form.querySelector(`#${CSS.escape(id)}-error`);
  if (!control || !error) return false;
  error.textContent = message;
  error.hidden = false;
  control.setAttribute("aria-invalid", "true");
  control.focus();
  return true;
}

// Clears every field error of a form.
export function clearErrors(form) {
  for (const error of form.querySelectorAll(".field-error, .form-error")) { error.hidden = true; error.textContent = ""; }
  for (const control of form.querySelectorAll("[aria-invalid]")) control.removeAttribute("aria-invalid");
}

// The API's error (an ApiError) beside the control named by its `field`, else in `formError`.
export function showError(form, formError, error) {
  const name = (error.field ?? "").split(/[^A-Za-z]/)[0];
  const control = name ? form.querySelector(`[name="${name}"]`) : null;
  if (control && showFieldError(form, control.id, error.message)) return;
  formError.textContent = error.message;
  formError.hidden = false;
}

// Delete in two taps: the first turns the button into "Really delete" (and says so).
export function deleteButton(name, announce, action, onError) {
  let armed = false;
  const button = h("button", { type: "button", class: "danger", "aria-label": t("deleteNamed", { name }), onclick: async () => {
    if (!armed) {
      armed = true;
      button.textContent = t("confirmDelete");
      announce(t("armed", { name }));
      return;
    }
    button.disabled = true;
    try { await action(); } catch (error) { button.disabled = false; onError(error); }
  } }, t("delete"));
  return button;
}

// The deepest the category tree nests on screen, and a category list indents: nothing bounds
// how deep a chain of categories goes (a member's writes, a peer's events).
export const maxNesting = 12;
