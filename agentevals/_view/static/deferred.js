// Fills an element with [data-fragment] from that URL once the page shows: the overview's slow parts
// (each scorer's runs in its coverage cell, the worst scores in the slot itself).
(function () {
  "use strict";
  function fill(slot, html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    document.querySelectorAll("[data-coverage]").forEach(function (cell) {
      var found = Array.prototype.find.call(doc.querySelectorAll("[data-coverage]"), function (el) {
        return el.getAttribute("data-coverage") === cell.getAttribute("data-coverage");
      });
      cell.replaceChildren.apply(cell, found ? Array.from(found.childNodes) : [document.createTextNode("–")]);
    });
    var worst = doc.getElementById("worst-table");
    slot.replaceChildren.apply(slot, worst ? Array.from(worst.childNodes) : []);
  }
  function failed(slot, why) {
    var note = document.createElement("p");
    note.className = "bad";
    note.textContent = "could not load this part: " + why + " (reload the page to try again)";
    slot.replaceChildren(note);
    document.querySelectorAll("[data-coverage] .loading").forEach(function (el) { el.textContent = "?"; });
  }
  document.querySelectorAll("[data-fragment]").forEach(function (slot) {
    fetch(slot.getAttribute("data-fragment"), { headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) { fill(slot, html); }, function (err) { failed(slot, String(err.message || err)); })
      .then(function () { slot.removeAttribute("aria-busy"); });
  });
})();
