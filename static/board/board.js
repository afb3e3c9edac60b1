/* Board: the little the server cannot do — telling the server the browser's time zone, ticking
 * countdowns and ages (absolute times are rendered by the server, in the viewer's zone), toasts,
 * the drawer's open/close, keyboard navigation, multi-select, the theme toggle.
 * Everything else is htmx swapping server-rendered HTML. No inline scripts (CSP). */
(function () {
  "use strict";

  var body = document.body;
  var serverNow = Date.parse(body.getAttribute("data-server-now") || "");
  var skew = isNaN(serverNow) ? 0 : serverNow - Date.now(); /* client clock vs server clock */

  function now() { return Date.now() + skew; }

  /* ---- durations and times ------------------------------------------------------------ */

  function duration(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60); s = s % 60;
    if (m < 60) return m + "m " + (s < 10 ? "0" : "") + s + "s";
    var h = Math.floor(m / 60); m = m % 60;
    if (h < 48) return h + "h " + (m < 10 ? "0" : "") + m + "m";
    return Math.floor(h / 24) + "d " + (h % 24) + "h";
  }

  function age(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 172800) return Math.floor(s / 3600) + "h";
    return Math.floor(s / 86400) + "d";
  }

  function formatTimes(root) {
    var nodes = (root || document).querySelectorAll('time[data-format="age"]');
    for (var i = 0; i < nodes.length; i++) {
      var t = Date.parse(nodes[i].getAttribute("datetime"));
      if (!isNaN(t)) nodes[i].textContent = age(now() - t);
    }
    tickCountdowns(root);
  }

  /* ---- the browser's time zone ---------------------------------------------------------
   * The server renders every time in the viewer's zone (todos/dashboard/clock.py). For "my
   * browser's zone" it needs that zone: a cookie every request carries (live fragments too),
   * and the zone switch's hidden field. If the page was rendered without it (a first visit),
   * it is loaded again once, now that the server can know: only a page a GET rendered (never
   * the answer to a form, which a reload would send again). */
  var ZONE_COOKIE = "board_browser_zone";
  var browserZone = "";
  try { browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { /* none */ }

  function zoneCookie() {
    var parts = document.cookie ? document.cookie.split("; ") : [];
    for (var i = 0; i < parts.length; i++) {
      if (parts[i].indexOf(ZONE_COOKIE + "=") === 0) return parts[i].slice(ZONE_COOKIE.length + 1);
    }
    return "";
  }

  function tellZone() {
    if (!browserZone || !/^[A-Za-z0-9_+\-\/]+$/.test(browserZone)) return;
    if (zoneCookie() !== browserZone) {
      document.cookie = ZONE_COOKIE + "=" + browserZone + "; path=/; max-age=31536000; SameSite=Lax" +
        (window.location.protocol === "https:" ? "; Secure" : "");
    }
    var fields = document.querySelectorAll("[data-browser-zone]");
    for (var i = 0; i < fields.length; i++) fields[i].value = browserZone;
    var names = document.querySelectorAll("[data-browser-zone-name]");
    for (var j = 0; j < names.length; j++) names[j].textContent = "(" + browserZone + ")";
    if (body.getAttribute("data-zone-choice") === "browser" && body.hasAttribute("data-zone-reloadable") &&
        zoneCookie() === browserZone &&
        body.getAttribute("data-browser-zone-seen") !== browserZone) {
      window.location.reload();
    }
  }

  tellZone();

  var LAPSE_GRACE_MS = 1000;

  function tickCountdowns(root) {
    var nodes = (root || document).querySelectorAll("time[data-countdown]");
    for (var i = 0; i < nodes.length; i++) {
      var el = nodes[i];
      var t = Date.parse(el.getAttribute("data-countdown"));
      if (isNaN(t)) continue;
      var left = t - now();
      el.textContent = left >= 0 ? "in " + duration(left) : "lapsed " + duration(-left) + " ago";
      el.classList.toggle("is-lapsed", left < 0);
      el.classList.toggle("is-soon", left >= 0 && left < 60000);
      /* a time whose passing changes its region (a rate key refilled): render the region again,
       * once, a moment after (the server's clock must have passed it too) */
      if (left < -LAPSE_GRACE_MS && el.hasAttribute("data-countdown-refresh") && !el.hasAttribute("data-refreshed")) {
        el.setAttribute("data-refreshed", "");
        var region = el.closest("[data-live-region]");
        if (region) region.dispatchEvent(new CustomEvent("live-refresh", { bubbles: false }));
      }
    }
  }

  setInterval(function () { tickCountdowns(document); }, 1000);
  setInterval(function () { formatTimes(document); }, 15000);

  /* ---- toasts ------------------------------------------------------------------------- */

  var toasts = document.getElementById("toasts");
  var MAX_TOASTS = 3;

  function dismissLater(el, level) {
    setTimeout(function () { if (el.parentNode) el.parentNode.removeChild(el); }, level === "error" ? 10000 : 4000);
  }

  function showToast(level, message) {
    if (!toasts || !message) return;
    if (level === "success") {
      /* a later success makes an earlier error stale ("could not complete: …" once it completed),
       * and replaces an earlier success: successes do not stack up */
      var stale = toasts.querySelectorAll(".toast-error, .toast-success");
      for (var s = 0; s < stale.length; s++) stale[s].remove();
    }
    var el = document.createElement("div");
    el.className = "toast toast-" + (level || "info");
    el.setAttribute("data-toast", "");
    el.textContent = message; /* text, never HTML */
    var close = document.createElement("button");
    close.type = "button"; close.className = "toast-close"; close.setAttribute("aria-label", "Dismiss");
    close.setAttribute("data-dismiss", ""); close.textContent = "×";
    el.appendChild(close);
    toasts.appendChild(el);
    var shown = toasts.querySelectorAll("[data-toast]");
    for (var i = 0; i < shown.length - MAX_TOASTS; i++) shown[i].remove(); /* keep the newest few */
    dismissLater(el, level);
  }

  if (toasts) {
    var existing = toasts.querySelectorAll("[data-toast]");
    for (var i = 0; i < existing.length; i++) dismissLater(existing[i], existing[i].classList.contains("toast-error") ? "error" : "info");
  }

  body.addEventListener("board:toast", function (evt) {
    var items = (evt.detail && evt.detail.items) || [];
    items.forEach(function (item) { showToast(item.level, item.message); });
  });

  body.addEventListener("htmx:responseError", function (evt) {
    var xhr = evt.detail.xhr;
    if (xhr && xhr.getResponseHeader("HX-Trigger")) return; /* the server already said why */
    showToast("error", "Something went wrong (" + (xhr ? xhr.status : "?") + "). Reload the page to see the current state.");
  });
  body.addEventListener("htmx:sendError", function () {
    showToast("error", "The Board is unreachable. Check the connection and try again.");
  });

  /* ---- keep the other views of a changed todo current ------------------------------------ */

  function refresh(el) { if (el && window.htmx) window.htmx.trigger(el, "live-refresh"); }

  body.addEventListener("board:todo-changed", function (evt) {
    var d = evt.detail || {};
    if (!d.id) return;
    var esc = window.CSS && CSS.escape ? CSS.escape(d.id) : d.id;
    if (d.source !== "drawer") refresh(document.querySelector('#drawer[data-todo-id="' + esc + '"]'));
    if (d.source !== "row") refresh(document.querySelector('tr[data-todo-id="' + esc + '"]'));
    var counts = document.querySelectorAll('[data-live-region="counts"]');
    for (var i = 0; i < counts.length; i++) refresh(counts[i]);
  });

  body.addEventListener("board:bulk-finished", function () {
    window.htmx && window.htmx.trigger(body, "board:refresh-list");
  });

  /* ---- the drawer ---------------------------------------------------------------------- */

  var lastOpener = null;

  function markOpenRow() {
    var drawer = document.getElementById("drawer");
    var id = drawer && drawer.getAttribute("data-todo-id");
    var rows = document.querySelectorAll("tr.todo-row");
    for (var i = 0; i < rows.length; i++) {
      rows[i].classList.toggle("is-open", !!id && rows[i].getAttribute("data-todo-id") === id);
    }
    var layout = document.querySelector(".todos-layout");
    if (layout) layout.classList.toggle("has-drawer", !!id);
    /* on a phone the drawer covers the screen (board.css): what it hides takes no focus meanwhile */
    var covered = !!id && !!layout && window.matchMedia("(max-width: 600px)").matches;
    var hidden = document.querySelectorAll(".todos-main, .topbar");
    for (var j = 0; j < hidden.length; j++) hidden[j].inert = covered;
  }

  /* The open drawer is in the URL (?open=<id>): opening one from the list pushes a history
   * entry, so "back" closes it, and a reload renders it again (the list view reads ?open). */
  function urlWithDrawer(id) {
    var url = new URL(window.location.href);
    if (id) url.searchParams.set("open", id); else url.searchParams.delete("open");
    return url.pathname + url.search + url.hash;
  }

  function openInUrl() { return new URL(window.location.href).searchParams.get("open"); }

  function closeDrawer(fromHistory) {
    var drawer = document.getElementById("drawer");
    if (!drawer || drawer.classList.contains("drawer-page") || !drawer.getAttribute("data-todo-id")) return false;
    var empty = document.createElement("aside");
    empty.id = "drawer"; empty.className = "drawer drawer-empty"; empty.hidden = true;
    drawer.parentNode.replaceChild(empty, drawer);
    markOpenRow();
    if (!fromHistory && openInUrl()) window.history.replaceState(window.history.state, "", urlWithDrawer(null));
    if (lastOpener && document.body.contains(lastOpener)) lastOpener.focus();
    return true;
  }

  window.addEventListener("popstate", function (evt) {
    if (!document.querySelector(".todos-layout")) return;
    if (evt.state && evt.state.htmx) return; /* htmx restores the entries it pushed itself */
    var id = openInUrl();
    var drawer = document.getElementById("drawer");
    var current = drawer && drawer.getAttribute("data-todo-id");
    if (!id) { if (current) closeDrawer(true); return; }
    if (id !== current && window.htmx) {
      window.htmx.ajax("GET", "/todos/" + encodeURIComponent(id) + "/drawer/", { target: "#drawer", swap: "outerHTML" });
    }
  });

  document.addEventListener("click", function (evt) {
    var target = evt.target;
    if (!(target instanceof Element)) return;
    /* a confirmation: the Board's own dialog (never window.confirm), its buttons named for what
     * they do; the dialog's submit button sends the form it sits in */
    var asks = target.closest("[data-confirm]");
    if (asks) {
      var dialog = document.getElementById(asks.getAttribute("data-confirm"));
      if (dialog && typeof dialog.showModal === "function") { evt.preventDefault(); dialog.showModal(); return; }
    }
    var keep = target.closest("[data-dialog-close]");
    if (keep) { var open = keep.closest("dialog"); if (open) open.close(); return; }
    var close = target.closest("[data-close-drawer]");
    if (close) { evt.preventDefault(); closeDrawer(false); return; }
    var opener = target.closest("[data-open-drawer]");
    if (opener) { lastOpener = opener; }
    var dismiss = target.closest("[data-dismiss]");
    if (dismiss && dismiss.parentNode) { dismiss.parentNode.remove(); return; }
    var panel = target.closest("[data-dismiss-panel]");
    if (panel) { var p = document.getElementById("bulk-panel"); if (p) p.innerHTML = ""; return; }
    var toggle = target.closest("[data-theme-toggle]");
    if (toggle) { switchTheme(); return; }
    var menu = target.closest("[data-nav-toggle]");
    if (menu) { setNavOpen(menu.getAttribute("aria-expanded") !== "true"); return; }
    if (!target.closest("#mainnav")) setNavOpen(false); /* a tap elsewhere folds the menu away */
  });

  /* ---- the phone menu: at narrow widths the main navigation folds behind a Menu button
   * (board.css shows the button and hides #mainnav until the top bar has .nav-open) --------- */
  function setNavOpen(open) {
    var button = document.querySelector("[data-nav-toggle]");
    if (!button) return false;
    var was = button.getAttribute("aria-expanded") === "true";
    button.setAttribute("aria-expanded", open ? "true" : "false");
    var bar = button.closest(".topbar");
    if (bar) bar.classList.toggle("nav-open", open);
    return was && !open;
  }

  /* ---- selection for bulk actions -------------------------------------------------------- */

  function updateSelection() {
    var boxes = document.querySelectorAll('input[name="ids"][form="bulk-form"]');
    var n = 0;
    for (var i = 0; i < boxes.length; i++) if (boxes[i].checked) n++;
    var label = document.querySelector("[data-selected-count]");
    if (label) label.textContent = n ? n + " selected" : "None selected";
    /* "Retry selected" with nothing selected has nothing to do: off until a box is ticked
     * (without JavaScript the server answers it with a hint instead) */
    var needs = document.querySelectorAll("[data-needs-selection]");
    for (var j = 0; j < needs.length; j++) needs[j].disabled = n === 0;
    var all = document.querySelector("[data-select-all]");
    if (all) { all.checked = n > 0 && n === boxes.length; all.indeterminate = n > 0 && n < boxes.length; }
  }

  document.addEventListener("change", function (evt) {
    var t = evt.target;
    if (!(t instanceof HTMLInputElement)) return;
    if (t.hasAttribute("data-select-all")) {
      var boxes = document.querySelectorAll('input[name="ids"][form="bulk-form"]');
      for (var i = 0; i < boxes.length; i++) boxes[i].checked = t.checked;
      updateSelection();
    } else if (t.name === "ids") {
      updateSelection();
    }
  });

  /* ---- keyboard: / search, j/k move, o/Enter open, Esc close ------------------------------ */

  function rows() { return Array.prototype.slice.call(document.querySelectorAll("#todo-rows tr.todo-row")); }

  function currentIndex(list) {
    var active = document.activeElement;
    for (var i = 0; i < list.length; i++) {
      if (list[i].classList.contains("is-cursor") || list[i].contains(active)) return i;
    }
    return -1;
  }

  function moveCursor(delta) {
    var list = rows();
    if (!list.length) return;
    var i = currentIndex(list);
    var next = i < 0 ? 0 : Math.min(list.length - 1, Math.max(0, i + delta));
    list.forEach(function (r) { r.classList.remove("is-cursor"); });
    list[next].classList.add("is-cursor");
    var link = list[next].querySelector(".todo-link");
    if (link) link.focus();
  }

  document.addEventListener("keydown", function (evt) {
    if (evt.defaultPrevented || evt.ctrlKey || evt.metaKey || evt.altKey) return;
    var t = evt.target;
    var typing = t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
    if (evt.key === "Escape") {
      if (document.querySelector("dialog[open]")) return; /* Esc closes the dialog, not the drawer */
      if (typing && t.id === "q") { t.blur(); return; }
      if (setNavOpen(false)) { evt.preventDefault(); document.querySelector("[data-nav-toggle]").focus(); return; }
      if (closeDrawer(false)) evt.preventDefault();
      return;
    }
    if (typing) return;
    if (evt.key === "/") {
      var q = document.getElementById("q");
      if (q) { evt.preventDefault(); q.focus(); q.select(); }
    } else if (evt.key === "j") {
      evt.preventDefault(); moveCursor(1);
    } else if (evt.key === "k") {
      evt.preventDefault(); moveCursor(-1);
    } else if (evt.key === "o" || (evt.key === "Enter" && !(t instanceof HTMLAnchorElement) && !(t instanceof HTMLButtonElement))) {
      var list = rows();
      var i = currentIndex(list);
      if (i >= 0) {
        var link = list[i].querySelector(".todo-link");
        if (link) { evt.preventDefault(); lastOpener = link; link.click(); }
      }
    }
  });

  /* ---- theme ------------------------------------------------------------------------- */

  function effectiveTheme() {
    var set = document.documentElement.getAttribute("data-theme");
    if (set) return set;
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  function switchTheme() {
    var next = effectiveTheme() === "dark" ? "light" : "dark";
    document.documentElement.setAttribute("data-theme", next);
    try { window.localStorage.setItem("board-theme", next); } catch (e) { /* not stored */ }
    labelThemeToggle();
  }

  function labelThemeToggle() {
    var btn = document.querySelector("[data-theme-toggle]");
    if (!btn) return;
    var dark = effectiveTheme() === "dark";
    btn.textContent = dark ? "☀" : "☾";
    btn.setAttribute("aria-label", dark ? "Switch to the light theme" : "Switch to the dark theme");
    btn.title = btn.getAttribute("aria-label");
  }

  /* ---- a table wider than its box says so (board.css shows the sign and pins row actions) -- */

  function markOverflow(wrap) {
    var over = wrap.scrollWidth > wrap.clientWidth + 1;
    if (wrap.getAttribute("data-overflow") !== String(over)) wrap.setAttribute("data-overflow", String(over));
  }

  var sized = window.ResizeObserver ? new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { markOverflow(entry.target.closest(".table-wrap") || entry.target); });
  }) : null;

  function watchTables(root) {
    var wraps = (root || document).querySelectorAll ? (root || document).querySelectorAll(".table-wrap") : [];
    var all = Array.prototype.slice.call(wraps);
    if (root && root.classList && root.classList.contains("table-wrap")) all.push(root);
    if (root && root.closest && root.closest(".table-wrap")) all.push(root.closest(".table-wrap"));
    all.forEach(function (wrap) {
      markOverflow(wrap);
      if (sized && !wrap.hasAttribute("data-watched")) {
        wrap.setAttribute("data-watched", "");
        sized.observe(wrap);
        var table = wrap.querySelector("table");
        if (table) sized.observe(table);
      }
    });
  }

  /* ---- after every swap --------------------------------------------------------------- */

  function onContent(root) {
    /* the list was swapped for another filter: the page's live filter follows it */
    var list = document.getElementById("todo-list");
    if (list && list.hasAttribute("data-live-filter")) body.setAttribute("data-live-filter", list.getAttribute("data-live-filter"));
    formatTimes(root);
    watchTables(root);
    markOpenRow();
    updateSelection();
  }

  body.addEventListener("htmx:afterSwap", function (evt) {
    var target = evt.detail && evt.detail.target;
    if (target && target.id === "drawer" && evt.detail.requestConfig && evt.detail.requestConfig.verb === "get") {
      var drawer = document.getElementById("drawer");
      var opened = drawer && drawer.getAttribute("data-todo-id");
      if (opened && evt.detail.requestConfig.triggeringEvent &&
          evt.detail.requestConfig.triggeringEvent.type === "click") {
        drawer.focus({ preventScroll: true });
        if (document.querySelector(".todos-layout") && openInUrl() !== opened) {
          window.history.pushState({ boardDrawer: opened }, "", urlWithDrawer(opened));
        }
      }
    }
  });

  if (window.htmx) window.htmx.onLoad(function (el) { onContent(el); });
  labelThemeToggle();
  onContent(document);
})();
