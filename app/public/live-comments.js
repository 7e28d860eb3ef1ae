// Live comments: a comment posted on this page appears here without a reload. The
// server sends each one, rendered as the page lists it, as a Server-Sent Event from
// this page's address + "/live"; EventSource reconnects by itself, sending the id of
// the last comment it got, and the server replays what was missed. Without
// JavaScript (or EventSource) the page works as it always did.
(function () {
  "use strict";
  var list = document.querySelector("#comments ol.comments");
  if (!list || !window.EventSource) return;
  var heading = document.querySelector("#comments h2");
  var source = new EventSource(location.pathname.replace(/\/+$/, "") + "/live");
  source.onmessage = function (event) {
    var holder = document.createElement("template");
    holder.innerHTML = event.data;
    var item = holder.content.querySelector("li[id]");
    if (!item || document.getElementById(item.id)) return;
    list.appendChild(item);
    if (heading) heading.textContent = "Comments (" + list.children.length + ")";
  };
})();
