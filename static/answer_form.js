// "Add a passage" on the answer form: clone the formset's empty block with the next index.
(function () {
  var button = document.getElementById("add-passage");
  if (!button) return;
  button.addEventListener("click", function () {
    var total = document.getElementById("id_passage-TOTAL_FORMS");
    var n = parseInt(total.value, 10);
    var html = document.getElementById("passage-template").innerHTML.replace(/__prefix__/g, n).replace(/__n__/g, n + 1);
    document.getElementById("passage-blocks").insertAdjacentHTML("beforeend", html);
    total.value = n + 1;
    var blocks = document.querySelectorAll("[data-passage]");
    var text = blocks[blocks.length - 1].querySelector("textarea");
    if (text) text.focus();
  });
})();
