// Fills an element with [data-fragment] from that URL once the page shows: a page's slow parts (the
// overview: each scorer's runs in its coverage cell, the worst scores in the slot itself; a scorer page:
// the [data-part] tables, its breakdowns by agent model and scorer version).
(function () {
  "use strict";
  function same(doc, attribute, cell) {
    return Array.prototype.find.call(doc.querySelectorAll("[" + attribute + "]"), function (el) {
      return el.getAttribute(attribute) === cell.getAttribute(attribute);
    });
  }
  function fill(slot, html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    ["data-coverage", "data-dropped"].forEach(function (attribute) {
      document.querySelectorAll("[" + attribute + "]").forEach(function (cell) {
        var found = same(doc, attribute, cell);
        cell.replaceChildren.apply(cell, found ? Array.from(found.childNodes) : [document.createTextNode("–")]);
      });
    });
    document.querySelectorAll("[data-part]").forEach(function (part) {
      var found = same(doc, "data-part", part);
      if (found) { part.replaceChildren.apply(part, Array.from(found.childNodes)); }
    });
    var worst = doc.getElementById("worst-table");
    slot.replaceChildren.apply(slot, worst ? Array.from(worst.childNodes) : []);
  }
  function failed(slot, why) {
    var note = document.createElement("p");
    note.className = "bad";
    note.textContent = "could not load this part: " + why + " (reload the page to try again)";
    slot.replaceChildren(note);
    document.querySelectorAll("[data-coverage] .loading, [data-dropped] .loading, [data-part] .loading").forEach(function (el) {
      el.textContent = "?";
    });
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
