/* Board live updates: one websocket per tab, turned into ordinary htmx fragment requests.
 *
 * The server only says *what* changed ({"type": "changed", "ids", "queues", "ops", "teams"});
 * this script asks the server for the current fragments of whatever on the page shows it: rows
 * and the drawer by [data-todo-id], summaries by [data-live-region], new rows of the list through
 * its rows URL with ?newer_than=<cursor>. Every fragment is an authorised GET, so nothing the
 * socket carries can show a human more than a page load would.
 *
 * {"type": "resync"} (the server's listener recovered, or the human's teams changed) and every
 * reconnect of the socket re-fetch everything live on the page: notifications sent while we were
 * not listening are gone. #live-status says live / reconnecting / offline.
 *
 * No dependency but the global htmx; no inline script (CSP). */
(function () {
  "use strict";

  var body = document.body;
  var page = body.getAttribute("data-live-page") || "";
  var wsPath = body.getAttribute("data-ws-url");
  var statusEl = document.getElementById("live-status");

  var RETRY_START = 1000;       /* ms; doubling to RETRY_MAX */
  var RETRY_MAX = 30000;
  var OFFLINE_AFTER = 4;        /* failed reconnects (~15 s) before the indicator says offline */
  var CLOSE_SIGNED_OUT = 4401;
  var NEW_ROW_OPS = ["create", "requeue", "release", "force_release", "retry", "reap"];
  var ROWS_OPS = ["pause", "resume"]; /* no ids, but every row of the queue shows the pause */
  /* Ops that cannot change a summary region (absent region: every op counts). */
  var REGION_QUIET = {
    counts: ["heartbeat", "priority", "membership", "endpoint", "queue_setting"],
    overview: ["heartbeat", "assign", "priority", "membership", "endpoint"],
    schedules: ["heartbeat", "assign", "priority", "membership", "seen"],
    charts: ["create", "heartbeat", "assign", "priority", "membership", "endpoint", "pause", "resume", "retry",
             "requeue", "purge", "seen", "queue_setting"]
  };
  /* A summary region (the state counts, the overview table) refreshes at most once a second,
   * the last change of a second included: it sums many rows, and a busy queue changes it with
   * every message. Re-fetching it on each one cost a drain watched by 10 tabs 44 % of its
   * throughput (bench/README.md, "Dashboards watching"). Rows still refresh on every message. */
  var REGION_EVERY = 1000;  /* ms */
  /* Charts redraw every interval's bars and percentiles: at most every five seconds. */
  var REGION_EVERY_BY = { charts: 5000 };

  function setStatus(state, label) {
    if (!statusEl) return;
    statusEl.hidden = false;
    statusEl.setAttribute("data-state", state);
    statusEl.textContent = label || state;
    statusEl.title = state === "live" ? "Live: changes appear as they happen"
      : state === "offline" ? "Offline: changes will not appear until the page reconnects or reloads"
      : "Reconnecting: changes will appear once the connection is back";
  }

  /* A page that is not live (sign-in, forms, the dead-letter groups) says nothing: the
   * indicator stays hidden, as the server rendered it. Only a live page without the means to be
   * live (no WebSocket, no htmx) is offline. */
  if (!page) return;
  if (!wsPath || !window.WebSocket || !window.htmx) {
    setStatus("offline");
    return;
  }

  function has(list, items) {
    for (var i = 0; i < items.length; i++) if (list.indexOf(items[i]) >= 0) return true;
    return false;
  }

  function esc(value) { return window.CSS && CSS.escape ? CSS.escape(value) : String(value).replace(/["\\]/g, "\\$&"); }

  /* ---- refreshing one element ----------------------------------------------------------
   * A live element refreshes itself (hx-trigger="live-refresh", hx-swap="outerHTML"). If a
   * change arrives while its request is in flight, the answer may predate the change, and htmx
   * would drop a queued request once the swap has replaced the element; so we remember it and
   * refresh the element's successor once it has settled (htmx binds its triggers at settle).
   * The event does not bubble: a row's refresh must not also refresh a region around it. */

  var STALE_MS = 10000;
  var inflight = {}; /* key -> start time */
  var again = {};

  function keyOf(el) {
    if (el.id) return "#" + el.id;
    var region = el.getAttribute("data-live-region");
    return region ? "region:" + region : null;
  }

  function isLive(el) {
    var trigger = el && el.getAttribute && (el.getAttribute("hx-trigger") || el.getAttribute("data-hx-trigger") || "");
    return !!trigger && trigger.indexOf("live-refresh") >= 0;
  }

  /* htmx inherits hx-target and hx-push-url from ancestors: a row inside a list marked
   * hx-target="this" would replace the whole list, a summary inside a filter form would push its
   * fragment URL into the history. A live element always replaces itself and never navigates. */
  function pin(el) {
    if (!el.hasAttribute("hx-target") && !el.hasAttribute("data-hx-target")) el.setAttribute("hx-target", "this");
    if (!el.hasAttribute("hx-push-url") && !el.hasAttribute("data-hx-push-url")) el.setAttribute("hx-push-url", "false");
  }

  function refresh(el) {
    if (!isLive(el)) return;
    var key = keyOf(el);
    if (!key) return;
    /* A confirmation is open in it: replacing the element would take the dialog away under the
     * person's pointer. Refresh once it closes (confirmed: the action's answer replaces it anyway). */
    var asking = el.querySelector && el.querySelector("dialog[open]");
    if (asking) {
      if (!asking.hasAttribute("data-live-deferred")) {
        asking.setAttribute("data-live-deferred", "");
        asking.addEventListener("close", function () {
          asking.removeAttribute("data-live-deferred");
          if (document.body.contains(el)) refresh(el);
        }, { once: true });
      }
      return;
    }
    if (inflight[key] && Date.now() - inflight[key] < STALE_MS) { again[key] = true; return; }
    pin(el);
    el.dispatchEvent(new CustomEvent("live-refresh", { bubbles: false }));
  }

  function refreshAll(selector) {
    var nodes = document.querySelectorAll(selector);
    for (var i = 0; i < nodes.length; i++) refresh(nodes[i]);
  }

  function finished(el) {
    if (!isLive(el)) return;
    var key = keyOf(el);
    if (!key || !inflight[key]) return;
    delete inflight[key];
    if (again[key]) { delete again[key]; refresh(el); }
  }

  body.addEventListener("htmx:beforeRequest", function (evt) {
    var el = evt.detail && evt.detail.elt;
    if (isLive(el)) { var key = keyOf(el); if (key) inflight[key] = Date.now(); }
  });
  /* Swapped: the successor settles. Not swapped (an error, a 404 handled below): the element is
   * still in the page and gets afterRequest itself (a swapped-out one does not reach us). */
  body.addEventListener("htmx:afterSettle", function (evt) { finished(evt.detail && evt.detail.elt); });
  body.addEventListener("htmx:afterRequest", function (evt) {
    var el = evt.detail && evt.detail.elt;
    if (el && document.body.contains(el)) finished(el);
  });

  /* A live refresh answered 404/403: the todo is gone (purged) or no longer ours (we left its
   * team). Drop the row; say so in the drawer. No error toast: nothing went wrong. */
  body.addEventListener("htmx:beforeSwap", function (evt) {
    var d = evt.detail;
    var trigger = d && d.requestConfig && d.requestConfig.triggeringEvent;
    if (!trigger || trigger.type !== "live-refresh" || !d.xhr) return;
    if (d.xhr.status !== 404 && d.xhr.status !== 403 && d.xhr.status !== 410) return;
    d.shouldSwap = false;
    d.isError = false;
    var el = d.elt;
    if (!el || !document.body.contains(el)) return;
    if (el.tagName === "TR") {
      el.parentNode.removeChild(el);
    } else if (el.id === "drawer" && !el.hasAttribute("data-live-gone")) {
      el.setAttribute("data-live-gone", "");
      var note = document.createElement("p");
      note.className = "notice live-gone";
      note.setAttribute("role", "status");
      note.textContent = "This todo is no longer available to you (deleted, or you left its team).";
      el.insertBefore(note, el.firstChild);
    }
  });

  /* ---- new rows at the top of the list -------------------------------------------------
   * Only for the first page of the newest-first order (elsewhere new rows do not belong at the
   * top). Inserted at once when the list is scrolled to its top and the pointer is not over it;
   * otherwise held behind an "N new" button, so the row under the pointer never moves. */

  var fresh = { busy: false, again: false, held: [], tbody: null, button: null };

  function listBody() { return document.querySelector("tbody[data-live-list]"); }

  function newestFirstPage() {
    var q = new URLSearchParams(window.location.search);
    return (!q.get("sort") || q.get("sort") === "newest") && !q.get("after") && !q.get("before");
  }

  function fetchNewRows() {
    var tbody = listBody();
    if (!tbody || !newestFirstPage()) return;
    if (fresh.busy) { fresh.again = true; return; }
    var url = tbody.getAttribute("data-rows-url");
    if (!url) return;
    var cursor = tbody.getAttribute("data-newest-cursor");
    if (cursor) url += (url.indexOf("?") >= 0 ? "&" : "?") + "newer_than=" + encodeURIComponent(cursor);
    fresh.busy = true;
    fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true", "HX-Current-URL": window.location.href, "Accept": "text/html", "X-Board-Live-Refresh": "1" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) { if (html !== null && listBody() === tbody) take(tbody, html); })
      .catch(function () { /* offline: the reconnect's resync fetches them */ })
      .then(function () {
        fresh.busy = false;
        if (fresh.again) { fresh.again = false; fetchNewRows(); }
      });
  }

  function take(tbody, html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html;
    var got = tpl.content.querySelector("tbody");
    if (!got) return;
    var cursor = got.getAttribute("data-newest-cursor");
    if (cursor) tbody.setAttribute("data-newest-cursor", cursor);
    if (fresh.tbody !== tbody) { fresh.held = []; fresh.tbody = tbody; }
    var heldIds = {};
    fresh.held.forEach(function (row) { heldIds[row.id] = true; });
    var batch = [];
    var rows = got.querySelectorAll("tr[data-todo-id]");
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].id && !document.getElementById(rows[i].id) && !heldIds[rows[i].id]) batch.push(rows[i]);
    }
    fresh.held = batch.concat(fresh.held); /* each batch is newer than the previous one */
    place(tbody);
  }

  function scrollParent(el) {
    for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      var style = window.getComputedStyle(p);
      if (/(auto|scroll)/.test(style.overflowY) && p.scrollHeight > p.clientHeight) return p;
    }
    return null;
  }

  function quietAtTop(tbody) {
    var table = tbody.closest("table") || tbody;
    if (table.matches(":hover")) return false;
    var scroller = scrollParent(tbody);
    var top = scroller ? scroller.getBoundingClientRect().top : 0;
    return tbody.getBoundingClientRect().top >= top - 1;
  }

  function place(tbody) {
    if (!fresh.held.length) { showButton(tbody, 0); return; }
    if (quietAtTop(tbody)) insertHeld(tbody);
    else showButton(tbody, fresh.held.length);
  }

  function insertHeld(tbody) {
    var rows = fresh.tbody === tbody ? fresh.held : [];
    fresh.held = [];
    showButton(tbody, 0);
    if (!rows.length || !document.body.contains(tbody)) return;
    var empty = tbody.querySelector("tr.empty-row");
    if (empty) empty.parentNode.removeChild(empty);
    var html = rows.map(function (row) { row.classList.add("is-new"); return row.outerHTML; }).join("");
    window.htmx.swap(tbody, html, { swapStyle: "afterbegin" }); /* processed, htmx:load fired */
    setTimeout(function () {
      rows.forEach(function (row) {
        var el = document.getElementById(row.id);
        if (el) el.classList.remove("is-new");
      });
    }, 4000);
  }

  function showButton(tbody, n) {
    var button = fresh.button;
    if (!n) { /* removed, not hidden: a .button's display would beat [hidden] */
      if (button && button.parentNode) button.parentNode.removeChild(button);
      return;
    }
    if (!button || !button.parentNode || !document.body.contains(button.parentNode)) {
      button = fresh.button = document.createElement("button");
      button.type = "button";
      button.className = "button small live-new-rows";
      button.setAttribute("data-live-new-rows", "");
      button.addEventListener("click", function () {
        var current = listBody();
        if (!current) return;
        insertHeld(current);
        (current.closest("table") || current).scrollIntoView({ block: "start" });
      });
      /* Floating, so that showing it moves nothing: board.css places .live-new-rows (no inline
       * style: the CSP allows none, and htmx would copy a style attribute on its next settle). */
      var anchor = tbody.closest("section") || tbody.closest("table") || tbody;
      anchor.appendChild(button); /* inside the list: replaced (and forgotten) with it */
    }
    button.textContent = "↑ " + n + " new";
    button.setAttribute("aria-label", n + (n === 1 ? " new todo" : " new todos") + ": show at the top");
  }

  /* ---- what the server tells us -------------------------------------------------------- */

  var regionTimer = {};
  var regionLast = {};

  function refreshRegion(el) {
    var key = el.getAttribute("data-live-region");
    if (regionTimer[key]) return;  /* a refresh at the end of this second is already due */
    var wait = (regionLast[key] || 0) + (REGION_EVERY_BY[key] || REGION_EVERY) - Date.now();
    if (wait <= 0) { regionLast[key] = Date.now(); refresh(el); return; }
    regionTimer[key] = setTimeout(function () {
      delete regionTimer[key];
      regionLast[key] = Date.now();
      var current = document.querySelector('[data-live-region="' + esc(key) + '"]');
      if (current) refresh(current);  /* the element may have been swapped meanwhile */
    }, wait);
  }

  function onChanged(msg) {
    var ops = msg.ops || [];
    if (msg.overflow || has(ops, ROWS_OPS)) {
      refreshAll("[data-todo-id]");
    } else {
      (msg.ids || []).forEach(function (id) { refreshAll('[data-todo-id="' + esc(id) + '"]'); });
      /* the open drawer's graph shows its parents' and children's states */
      var drawer = document.querySelector("#drawer[data-related-ids]");
      if (drawer) {
        var related = " " + drawer.getAttribute("data-related-ids") + " ";
        if ((msg.ids || []).some(function (id) { return related.indexOf(" " + id + " ") >= 0; })) refresh(drawer);
      }
    }
    var regions = document.querySelectorAll("[data-live-region]");
    for (var i = 0; i < regions.length; i++) {
      var quiet = REGION_QUIET[regions[i].getAttribute("data-live-region")] || [];
      for (var j = 0; j < ops.length; j++) {
        if (quiet.indexOf(ops[j]) < 0) { refreshRegion(regions[i]); break; }
      }
    }
    if (has(ops, NEW_ROW_OPS)) fetchNewRows();
  }

  function resync() {
    refreshAll("[data-live-region]");
    refreshAll("[data-todo-id]");
    fetchNewRows();
  }

  /* The human lost a team: say so once, and re-read the list whole (one request) instead of
   * each of its rows (one 404 per row of that team); the drawer says itself if it is gone. */
  function leftTeam() {
    body.dispatchEvent(new CustomEvent("board:toast", { detail: { items: [{
      level: "info",
      message: "You are no longer a member of one of your teams: its todos have left this page."
    }] } }));
    refreshAll("[data-live-region]");
    refreshAll("#drawer[data-todo-id]");
    var list = document.getElementById("todo-list");
    if (list) window.htmx.trigger(body, "board:refresh-list");
    else refreshAll("[data-todo-id]");
  }

  /* A refresh that follows a change: with a read replica, the server reads it only once it has
   * replayed the change (todos/core/replica.py); without one the header means nothing. */
  body.addEventListener("htmx:configRequest", function (evt) {
    var trigger = evt.detail && evt.detail.triggeringEvent;
    if (trigger && trigger.type === "live-refresh") evt.detail.headers["X-Board-Live-Refresh"] = "1";
  });

  function onMessage(msg) {
    if (msg.type === "changed") onChanged(msg);
    else if (msg.type === "resync" && msg.left_team) leftTeam();
    else if (msg.type === "resync") resync();
    else if (msg.type === "status") setStatus(msg.state === "live" ? "live" : "reconnecting");
    else if (msg.type === "error" && window.console) console.warn("live:", msg.error);
  }

  /* ---- the socket ---------------------------------------------------------------------- */

  var ws = null;
  var failures = 0;
  var everOpen = false;
  var signedOut = false;
  var retryTimer = null;
  var lastSubscription = null;

  function subscription() {
    var drawer = document.getElementById("drawer");
    var filter = page === "todos" ? window.location.search.replace(/^\?/, "") : (body.getAttribute("data-live-filter") || "");
    var related = drawer && drawer.getAttribute("data-related-ids");
    return { page: page, filter: filter, todo: (drawer && drawer.getAttribute("data-todo-id")) || null,
             related: related ? related.split(" ") : [] };
  }

  function subscribe(force) {
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    var text = JSON.stringify({ subscribe: subscription() });
    if (!force && text === lastSubscription) return;
    lastSubscription = text;
    ws.send(text);
  }

  function connect() {
    retryTimer = null;
    if (signedOut) return;
    var url = (window.location.protocol === "https:" ? "wss://" : "ws://") + window.location.host + wsPath;
    try {
      ws = new WebSocket(url);
    } catch (e) {
      ws = null;
      retry();
      return;
    }
    ws.onopen = function () {
      var reconnected = everOpen;
      everOpen = true;
      failures = 0;
      subscribe(true);
      if (reconnected) resync(); /* whatever happened while we were away */
    };
    ws.onmessage = function (evt) {
      var msg;
      try { msg = JSON.parse(evt.data); } catch (e) { return; }
      if (msg && typeof msg.type === "string") onMessage(msg);
    };
    ws.onclose = function (evt) {
      ws = null;
      if (evt.code === CLOSE_SIGNED_OUT) {
        signedOut = true;
        setStatus("offline", "signed out");
        return;
      }
      retry();
    };
  }

  function retry() {
    if (retryTimer || signedOut) return;
    failures += 1;
    setStatus(failures > OFFLINE_AFTER || navigator.onLine === false ? "offline" : "reconnecting");
    var delay = Math.min(RETRY_MAX, RETRY_START * Math.pow(2, failures - 1));
    delay = delay * (0.8 + Math.random() * 0.4); /* a restarted server is not hit by every tab at once */
    retryTimer = setTimeout(connect, delay);
  }

  function reconnectNow() {
    if (ws || signedOut) return;
    if (retryTimer) { clearTimeout(retryTimer); retryTimer = null; }
    connect();
  }

  window.addEventListener("online", reconnectNow);
  window.addEventListener("offline", function () { if (!ws) setStatus("offline"); });
  window.addEventListener("pageshow", function (evt) { if (evt.persisted) reconnectNow(); });

  /* Re-subscribe when what the page shows changes: the drawer opens, closes or moves to another
   * todo (htmx swaps, or board.js replacing it), or the list's filter changes (pushed URL). */
  var pending = null;
  function subscriptionMayHaveChanged() {
    if (pending) return;
    pending = setTimeout(function () { pending = null; subscribe(false); }, 50);
  }
  new MutationObserver(subscriptionMayHaveChanged).observe(document.getElementById("main") || body, { childList: true, subtree: true });
  body.addEventListener("htmx:pushedIntoHistory", subscriptionMayHaveChanged);
  body.addEventListener("htmx:replacedInHistory", subscriptionMayHaveChanged);
  window.addEventListener("popstate", subscriptionMayHaveChanged);

  setStatus("reconnecting", "connecting");
  connect();
})();
