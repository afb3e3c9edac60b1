/* Endpoints: what HTML alone cannot do on the vend and reveal pages.
 *
 * - [data-copy="<id>"] buttons copy the text of element <id> (the token, the curl example, the
 *   worker and MCP configurations) and say so in a toast (board.js shows "board:toast" events).
 * - The vend form derives the slug from the name until the slug is edited by hand.
 * - Typing a custom expiry selects the "Until…" lifetime.
 *
 * Without JavaScript the token is still selectable text and the server derives the slug.
 * No inline script (CSP). */
(function () {
  "use strict";

  function toast(level, message) {
    document.body.dispatchEvent(new CustomEvent("board:toast", { detail: { items: [{ level: level, message: message }] } }));
  }

  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(area);
      if (ok) resolve(); else reject(new Error("copy refused"));
    });
  }

  document.addEventListener("click", function (evt) {
    var button = evt.target instanceof Element ? evt.target.closest("[data-copy]") : null;
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    copyText(source.textContent).then(function () {
      var label = button.getAttribute("data-label") || button.textContent;
      button.setAttribute("data-label", label);
      button.textContent = "Copied ✓";
      setTimeout(function () { button.textContent = label; }, 2000);
      toast("success", button.getAttribute("data-copied") || "Copied.");
    }, function () {
      selectText(source);
      toast("info", "Selected: press Ctrl+C (⌘C) to copy.");
    });
  });

  /* ---- the slug follows the name until edited -------------------------------------------- */

  function slugify(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 63).replace(/-+$/, "");
  }

  var name = document.querySelector("[data-slug-target]");
  var slug = name && document.getElementById(name.getAttribute("data-slug-target"));
  if (name && slug) {
    var byHand = slug.value !== "" && slug.value !== slugify(name.value);
    slug.addEventListener("input", function () { byHand = slug.value !== ""; });
    name.addEventListener("input", function () { if (!byHand) slug.value = slugify(name.value); });
  }

  /* ---- a custom expiry picks the "Until…" lifetime --------------------------------------- */

  var lifetime = document.querySelector("[data-lifetime]");
  if (lifetime) {
    var custom = lifetime.querySelector('input[name="lifetime"][value="custom"]');
    var when = lifetime.querySelector('input[name="expires_at"]');
    if (custom && when) {
      when.addEventListener("input", function () { if (when.value) custom.checked = true; });
      custom.addEventListener("change", function () { if (custom.checked && !when.value) when.focus(); });
    }
  }
})();
