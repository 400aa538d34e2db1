// Start Swagger UI on the served OpenAPI document (a file, so the page's CSP needs no inline script).
// The API's operations come first: those tagged "pages" (the HTML pages for people) are left
// out unless the page's address asks for them (/docs?pages). The "Authorize" button runs the
// OAuth authorization-code flow (with PKCE) against /oauth2/authorize, and comes back to
// Swagger UI's own redirect page, served with its other files.
window.addEventListener("load", function () {
  var target = document.getElementById("swagger-ui");
  var withPages = new URLSearchParams(window.location.search).has("pages");
  var hidePages = function () {
    return {
      statePlugins: {
        spec: {
          wrapSelectors: {
            taggedOperations: function (original) {
              return function () {
                var tagged = original.apply(null, arguments);
                if (withPages) {
                  return tagged;
                }
                return tagged.filter(function (operations, tag) {
                  return tag !== "pages";
                });
              };
            },
          },
        },
      },
    };
  };
  window.ui = SwaggerUIBundle({
    url: target.getAttribute("data-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    plugins: [hidePages],
    oauth2RedirectUrl: window.location.origin + target.getAttribute("data-oauth2-redirect"),
  });
  window.ui.initOAuth({ usePkceWithAuthorizationCodeGrant: true });
});
