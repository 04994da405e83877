// Every page: after a failed POST, focus moves to the error summary (its links lead to the fields);
// after an action that reports a message (acknowledged, resolved, accepted...), the message is
// moved into the live region #messages, which is empty at load, so screen readers announce it,
// and focus moves to it; an action that cannot be undone asks first (once its form is complete);
// a submitted form says it is busy and cannot be sent twice.
(function () {
  var summary = document.getElementById("error-summary");
  if (summary) summary.focus();

  var region = document.getElementById("messages");
  var list = document.getElementById("messages-at-load");
  if (region && list) {
    // after the empty region has been seen, so the change is announced
    window.setTimeout(function () {
      if (list.querySelector(".msg-error")) region.setAttribute("aria-live", "assertive");
      list.removeAttribute("id");
      region.appendChild(list);
      if (!summary) region.focus();
    }, 100);
  }
  // the admin console's own message list (a saved settings page): focus moves to it, announced
  var adminMessages = !region && !summary && document.querySelector("ul.messagelist");
  if (adminMessages) {
    adminMessages.setAttribute("role", "status");
    adminMessages.setAttribute("tabindex", "-1");
    adminMessages.focus();
  }

  // Confirmations: a form marked data-confirm (an action that cannot be undone: escalating, resolving,
  // deciding on a revision) asks before it is sent, but only once it is complete: with a required
  // field empty nothing is asked, and the server says what is missing.
  function complete(form) {
    var fields = form.querySelectorAll("[required]");
    for (var i = 0; i < fields.length; i++) {
      var field = fields[i];
      if (field.type === "radio") {
        if (!form.querySelector('input[type=radio][name="' + field.name + '"]:checked')) return false;
      } else if (field.type === "checkbox") {
        if (!field.checked) return false;
      } else if (!String(field.value || "").trim()) {
        return false;
      }
    }
    return true;
  }
  // A form whose question depends on a choice (accept or reject a revision) names the radio
  // group in data-confirm-by and says each question in data-confirm-<value>.
  function question(form) {
    var by = form.getAttribute("data-confirm-by");
    var chosen = by && form.querySelector('input[type=radio][name="' + by + '"]:checked');
    return (chosen && form.getAttribute("data-confirm-" + chosen.value)) || form.getAttribute("data-confirm");
  }
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (complete(form) && !window.confirm(question(form))) event.preventDefault();
    });
  });

  function busy(form, button) {
    form.setAttribute("aria-busy", "true");
    button.setAttribute("data-idle-label", button.innerHTML);
    button.classList.add("is-busy");
    button.innerHTML = '<span class="spinner" aria-hidden="true"></span> ' + (button.getAttribute("data-busy-label") || "Working…");
    // disabled after the browser has read the form's data (a disabled submitter would not be sent)
    window.setTimeout(function () { button.disabled = true; }, 0);
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented || (form.getAttribute("method") || "get").toLowerCase() !== "post") return;
    var button = event.submitter || form.querySelector("button[type=submit], button:not([type])");
    if (!button) return;
    if (button.classList.contains("is-busy")) { event.preventDefault(); return; }
    busy(form, button);
  });

  // back/forward cache: a page shown again must not keep its buttons busy
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("button.is-busy").forEach(function (button) {
      button.disabled = false;
      button.classList.remove("is-busy");
      button.innerHTML = button.getAttribute("data-idle-label");
      button.form && button.form.removeAttribute("aria-busy");
    });
  });
})();
