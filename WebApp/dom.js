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
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
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
