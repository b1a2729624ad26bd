/* cardroom: the little JavaScript every page may use.
 *  - [data-refresh-url]: the element's content is re-fetched every
 *    data-refresh-seconds (paused while the tab is hidden); with
 *    data-refresh-outer the fetched HTML replaces the element itself.
 *  - [data-dropzone]: drag and drop a file onto the upload form.
 *  - [data-copy]: copy the text of another element.
 *  - [data-reveal]: show or hide another element (a secret), swapping it
 *    with its mask (data-mask).
 *  - form[data-confirm]: asks before the form is sent.
 *  - select[data-autosubmit]: sends its form when the choice changes.
 *  - time[data-local-time]: a UTC time (its datetime attribute, ISO 8601)
 *    shown in the reader's own time zone; the UTC text stays as its title.
 * (Handlers live here, never in on* attributes: the Content-Security-Policy
 * runs no inline script.)
 */
(function () {
  "use strict";

  function setupRefresh(el) {
    var seconds = parseInt(el.getAttribute("data-refresh-seconds") || "30", 10);
    var url = el.getAttribute("data-refresh-url");
    var outer = el.hasAttribute("data-refresh-outer");
    var timer = null;
    var busy = false;
    function tick() {
      if (document.hidden || busy) return;
      busy = true;
      fetch(url, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          busy = false;
          if (html === null) return;
          if (outer) {
            var holder = document.createElement("div");
            holder.innerHTML = html.trim();
            var fresh = holder.firstElementChild;
            if (!fresh) return;
            clearInterval(timer);
            el.replaceWith(fresh);
            if (fresh.hasAttribute("data-refresh-url")) setupRefresh(fresh);
            fresh.dispatchEvent(new CustomEvent("cardroom:refreshed", { bubbles: true }));
          } else {
            el.innerHTML = html;
            el.dispatchEvent(new CustomEvent("cardroom:refreshed", { bubbles: true }));
          }
        })
        .catch(function () { busy = false; });
    }
    timer = setInterval(tick, seconds * 1000);
    document.addEventListener("visibilitychange", function () { if (!document.hidden) tick(); });
  }

  function setupDropzone(zone) {
    var input = zone.querySelector("input[type=file]");
    var chosen = zone.querySelector("[data-chosen]");
    if (!input) return;
    function show() {
      chosen.textContent = input.files && input.files.length ? "Selected: " + input.files[0].name + " (" + input.files[0].size + " bytes)" : "";
    }
    input.addEventListener("change", show);
    ["dragenter", "dragover"].forEach(function (type) {
      zone.addEventListener(type, function (e) { e.preventDefault(); zone.classList.add("over"); });
    });
    ["dragleave", "drop"].forEach(function (type) {
      zone.addEventListener(type, function (e) { e.preventDefault(); zone.classList.remove("over"); });
    });
    zone.addEventListener("drop", function (e) {
      var files = e.dataTransfer && e.dataTransfer.files;
      if (!files || !files.length) return;
      var dt = new DataTransfer();
      dt.items.add(files[0]);
      input.files = dt.files;
      show();
    });
  }

  function setupCopy(button) {
    button.addEventListener("click", function () {
      var target = document.querySelector(button.getAttribute("data-copy"));
      if (!target) return;
      var text = target.textContent.trim();
      var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () {});
      } else {
        // Without the clipboard API (plain http): select it for Ctrl+C, shown first if it was masked.
        var reveal = target.hidden && document.querySelector('[data-reveal="' + button.getAttribute("data-copy") + '"]');
        if (reveal) reveal.click();
        var range = document.createRange();
        range.selectNodeContents(target);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        button.textContent = "Selected: press Ctrl+C";
      }
    });
  }

  function setupReveal(button) {
    var target = document.querySelector(button.getAttribute("data-reveal"));
    var mask = document.querySelector(button.getAttribute("data-mask"));
    if (!target) return;
    button.addEventListener("click", function () {
      var show = target.hidden;
      target.hidden = !show;
      if (mask) mask.hidden = show;
      button.textContent = show ? "Hide" : "Show";
      button.setAttribute("aria-expanded", String(show));
    });
  }

  function localTimes(root) {
    root.querySelectorAll("time[data-local-time]").forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when.getTime())) return;
      if (!el.title) el.title = el.textContent;
      el.textContent = when.toLocaleString(undefined, {
        year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short"
      });
    });
  }

  document.addEventListener("cardroom:refreshed", function (e) { localTimes(e.target.parentNode || document); });

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    document.querySelectorAll("[data-refresh-url]").forEach(setupRefresh);
    document.querySelectorAll("[data-dropzone]").forEach(setupDropzone);
    document.querySelectorAll("[data-copy]").forEach(setupCopy);
    document.querySelectorAll("[data-reveal]").forEach(setupReveal);
    document.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (e) {
        if (!window.confirm(form.getAttribute("data-confirm"))) e.preventDefault();
      });
    });
    document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
  });
})();
