// An image that cannot be loaded (a museum's address that no longer answers) gives way to its
// placeholder, named by the img's data-fallback attribute: a page never shows a broken image.
// A file of its own, since the pages' Content-Security-Policy runs no inline script.
(function () {
  "use strict";
  function fallBack(img) {
    var to = img.getAttribute("data-fallback");
    if (to && img.getAttribute("src") !== to) {
      img.src = to;
    }
  }
  // Error events do not bubble; a listener on the capture phase sees every image's.
  document.addEventListener("error", function (event) {
    var target = event.target;
    if (target && target.tagName === "IMG" && target.hasAttribute("data-fallback")) {
      fallBack(target);
    }
  }, true);
  // Images that failed before this deferred script ran.
  document.querySelectorAll("img[data-fallback]").forEach(function (img) {
    if (img.complete && img.naturalWidth === 0) {
      fallBack(img);
    }
  });
})();
