// Live comments: a comment posted on this page appears here without a reload. The
// server sends each one, rendered as the page lists it, as a Server-Sent Event from
// this page's address + "/live"; EventSource reconnects by itself, sending the id of
// the last comment it got, and the server replays what was missed. If even that was
// too much (an event of type "lagged"), the list is fetched again whole. Without
// JavaScript (or EventSource) the page works as it always did.
(function () {
  "use strict";
  var list = document.querySelector("#comments ol.comments");
  if (!list || !window.EventSource) return;
  var heading = document.querySelector("#comments h2");
  var count = function () {
    if (heading) heading.textContent = "Comments (" + list.children.length + ")";
  };
  var source = new EventSource(location.pathname.replace(/\/+$/, "") + "/live");
  source.onmessage = function (event) {
    var holder = document.createElement("template");
    holder.innerHTML = event.data;
    var item = holder.content.querySelector("li[id]");
    if (!item || document.getElementById(item.id)) return;
    list.appendChild(item);
    count();
  };
  source.addEventListener("lagged", function () {
    fetch(location.pathname, { credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("#comments ol.comments");
        if (fresh) {
          list.innerHTML = fresh.innerHTML;
          count();
        }
      });
  });
})();
