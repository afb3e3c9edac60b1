/* Board: apply the stored colour theme before the first paint (no flash). Loaded in <head>. */
(function () {
  document.documentElement.className += " js"; /* styles for "JavaScript is on" (e.g. no Apply button) */
  try {
    var theme = window.localStorage.getItem("board-theme");
    if (theme === "light" || theme === "dark") {
      document.documentElement.setAttribute("data-theme", theme);
    }
  } catch (e) {
    /* storage disabled: follow prefers-color-scheme */
  }
})();
