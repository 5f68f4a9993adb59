// Switchboard console: small conveniences over plain links and forms; every
// page works without this script.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  // A click on a message (not on a link inside it) opens its run chain.
  document.querySelectorAll("li.msg[data-href]").forEach(function (li) {
    li.addEventListener("click", function (ev) {
      if (ev.target.closest("a") || window.getSelection().toString() !== "") return;
      window.location.assign(li.getAttribute("data-href"));
    });
  });
  // Picking an agent shows the conversation at once.
  document.querySelectorAll("select.autosubmit").forEach(function (sel) {
    sel.addEventListener("change", function () {
      var cursor = sel.form.querySelector("input[name=cursor]");
      if (cursor) cursor.remove();
      sel.form.submit();
    });
  });
  // The newest message is at the bottom: start there.
  var chat = document.getElementById("messages");
  if (chat && chat.lastElementChild && !window.location.hash) {
    chat.lastElementChild.scrollIntoView({ block: "end" });
  }
});
